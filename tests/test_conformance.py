"""schemathesis against a live ``chatmem serve``: every answer of the whole API conforms to
``/openapi.json`` (status documented, content type, body schema, headers, and never a 5xx).

It runs the schemathesis CLI (the supported way to test a live server) on SQLite and PostgreSQL,
with an admin's key so admin routes are exercised too, and with real ids (a conversation with a
finished turn, an agent, a project, a memory, a share, a problem report) so the generated requests
reach the code behind the 404s. Deleting routes get their own throw-away objects.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import httpx
import pytest

from .servers import Server, create_user

pytestmark = pytest.mark.slow

SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
#: ``make fuzz`` sets CHATMEM_SCHEMATHESIS_CHECKS=all (every check schemathesis has, same seed).
CHECKS = os.environ.get("CHATMEM_SCHEMATHESIS_CHECKS") or ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    )
)


def _png() -> bytes:
    """A valid 1×1 PNG (the report reader checks the header)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


PNG = _png()


def _turn(c: httpx.Client, cid: str, text: str) -> tuple[str, str]:
    r = c.post(f"/api/conversations/{cid}/messages", json={"content": text})
    assert r.status_code == 202, r.text
    ids = r.json()
    for _ in range(200):
        msg = c.get(f"/api/conversations/{cid}/messages/{ids['assistant_message_id']}").json()
        if msg["status"] != "streaming":
            break
        time.sleep(0.05)
    return ids["user_message_id"], ids["assistant_message_id"]


def _seed(base: str, key: str) -> dict:
    """Real objects for the generated requests to hit (and spare ones for the DELETE routes)."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as c:

        def make(path: str, body: dict) -> str:
            r = c.post(path, json=body)
            assert r.status_code == 201, r.text
            return r.json()["id"]

        agent = make("/api/agents", {"name": "Ada", "handle": "ada"})
        project = make("/api/projects", {"name": "Work"})
        cid = make("/api/conversations", {"title": "seeded", "project_id": project})
        q, a = _turn(c, cid, "My name is Sam and I live in Lisbon.")
        spare_cid = make("/api/conversations", {"title": "spare"})
        round_cid = make("/api/conversations", {"title": "rounds"})
        spare_q, _ = _turn(c, round_cid, "hello")
        memory = make("/api/me/memories", {"memory_text": "likes tea", "agent_id": agent})
        share = c.post(f"/api/conversations/{cid}/share").json()["token"]
        shared_cid = make("/api/conversations", {"title": "shared"})
        assert c.post(f"/api/conversations/{shared_cid}/share").status_code == 201
        form = {"description": (None, "seeded report"), "screenshot": ("s.png", PNG, "image/png")}
        report = c.post("/api/user-feedback", files=form).json()["id"]
        return {
            "cid": cid,
            "mid": a,
            "user_mid": q,
            "agent": agent,
            "project": project,
            "memory": memory,
            "token": share,
            "rid": report,
            "spare_cid": spare_cid,
            "round_cid": round_cid,
            "shared_cid": shared_cid,
            "spare_mid": spare_q,
            "spare_agent": make("/api/agents", {"name": "Bo", "handle": "bo"}),
            "spare_project": make("/api/projects", {"name": "Spare"}),
            "spare_memory": make("/api/me/memories", {"memory_text": "spare"}),
        }


def _config(ids: dict, key: str) -> str:
    def op(name: str, **params: str) -> str:
        # one exact operation name per block (several include-* filters in a block match any)
        body = ", ".join(f'"path.{k}" = "{v}"' for k, v in params.items())
        return f'[[operations]]\ninclude-name = "{name}"\nparameters = {{ {body} }}\n'

    crud = []
    for kind in ("projects", "agents"):
        one = ids[kind[:-1]]
        crud += [
            op(f"GET /api/{kind}/{{obj_id}}", obj_id=one),
            op(f"PATCH /api/{kind}/{{obj_id}}", obj_id=one),
            op(f"DELETE /api/{kind}/{{obj_id}}", obj_id=ids[f"spare_{kind[:-1]}"]),
        ]
    memory = "/api/me/memories/{mid}"
    return "\n".join(
        [
            f'headers = {{ Authorization = "Bearer {key}" }}',
            "request-timeout = 30",
            "max-stream-events = 500",
            "[generation]\nmax-examples = 12",
            "[parameters]",
            f'"path.cid" = "{ids["cid"]}"',
            f'"path.mid" = "{ids["mid"]}"',
            f'"path.token" = "{ids["token"]}"',
            f'"path.rid" = "{ids["rid"]}"',
            f'"path.agentId" = "{ids["agent"]}"',
            f'"path.memoryId" = "{ids["memory"]}"',
            f'"path.messageId" = "{ids["mid"]}"',
            "",
            *crud,
            op(f"GET {memory}", mid=ids["memory"]),
            op(f"PATCH {memory}", mid=ids["memory"]),
            op(f"GET {memory}/history", mid=ids["memory"]),
            op(f"DELETE {memory}", mid=ids["spare_memory"]),
            op("DELETE /api/conversations/{cid}", cid=ids["spare_cid"]),
            op(
                "DELETE /api/conversations/{cid}/messages/{mid}",
                cid=ids["round_cid"],
                mid=ids["spare_mid"],
            ),
            op("DELETE /api/conversations/{cid}/share", cid=ids["shared_cid"]),
        ]
    )


@pytest.fixture
def live(db_url, tmp_path):
    key = create_user(db_url, "admin@example.com", admin=True)
    server = Server(db_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "0"}, args=()).start()
    try:
        yield server, key
    finally:
        server.stop()


def test_the_whole_api_conforms_to_its_openapi_document(live, tmp_path):
    server, key = live
    ids = _seed(server.base, key)
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(ids, key))
    cmd = [
        SCHEMATHESIS,
        "--config-file",
        str(config),
        "run",
        f"{server.base}/openapi.json",
        "--checks",
        CHECKS,
        "--phases",
        "examples,coverage,fuzzing",
        "--workers",
        "2",
        "--seed",
        "14",
        "--no-color",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    out = r.stdout + r.stderr
    (tmp_path / "schemathesis.out").write_text(out)
    failures = out.find("=== FAILURES ===")
    if failures >= 0:
        out = out[failures:]
    assert r.returncode == 0, out[-20000:]
    assert "Tested: " in out, out[-5000:]

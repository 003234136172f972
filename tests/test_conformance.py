"""schemathesis against a live ``chatmem serve``: every answer of the whole API conforms to
``/openapi.json`` (status documented, content type, body schema, headers, and never a 5xx).

It runs the schemathesis CLI (the supported way to test a live server) on SQLite and PostgreSQL,
with an admin's key so admin routes are exercised too, and with real ids (a conversation with a
finished turn, an agent, a project, a memory, a share, a problem report, a workspace with its
memories) so the generated requests reach the code behind the 404s. Deleting routes get their
own throw-away objects.
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
        wid = make("/api/workspaces", {"name": "Team"})
        return {
            "wid": wid,
            "ws_memory": make(f"/api/workspaces/{wid}/memories", {"memory_text": "team tea"}),
            "spare_ws_memory": make(f"/api/workspaces/{wid}/memories", {"memory_text": "spare"}),
            "spare_wid": make("/api/workspaces", {"name": "Spare team"}),
            "spare_kid": c.post("/api/me/keys", json={"name": "spare"}).json()["key"]["id"],
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


#: Rejections of schema-valid requests that no schema can express: the request is well formed but
#: names something that does not fit (another account's email as the confirmation, a cursor this
#: server never issued or a page boundary that is no message of the conversation, a project of
#: another space, a model not configured, a wrong current password, an empty upload or a
#: screenshot that is not an image). Only that status is allowed
#: beside schemathesis' defaults, and only on that operation; every other schema-valid request
#: must be accepted (a validator stricter than its schema is a failure).
SEMANTIC = {
    "DELETE /api/account": "422",  # confirm ≠ the account's email
    "DELETE /api/admin/users/{uid}": "422",  # confirm ≠ that user's email
    "GET /api/admin/user-feedback": "400",  # cursor not issued here
    "GET /api/conversations": "400",  # cursor
    "GET /api/conversations/{cid}/messages": "400",  # before= a message of another conversation
    "GET /api/me/memories": "400",  # cursor
    "GET /api/workspaces/{wid}/feedback": "400",  # cursor
    "GET /rpc/chat/inbox/{agentId}/messages": "400",  # cursor
    "PATCH /api/conversations/{cid}": "422",  # a project of another space, an unknown model
    "POST /api/conversations": "422",  # agents are personal, a project of another space
    "POST /api/conversations/{cid}/messages": "422",  # a model that is not configured
    "POST /api/conversations/{cid}/regenerate": "422",  # a model that is not configured
    "POST /v1/chat/completions": "422",  # a model that is not configured
    "POST /api/imports": "422",  # an empty or unreadable upload
    "POST /api/me/password": "400",  # the current password is wrong
    "POST /api/user-feedback": "415",  # the screenshot's bytes are not a PNG or JPEG
    "POST /rpc/chat/inbox": "400",  # the last message must be the user's, with text
    "POST /api/me/memories": "422",  # valid_until before valid_from
    "PATCH /api/me/memories/{mid}": "422",  # valid_until before valid_from, a status change
    "GET /api/workspaces/{wid}/memories": "400",  # cursor
    "POST /api/workspaces/{wid}/memories": "422",  # valid_until before valid_from
    "PATCH /api/workspaces/{wid}/memories/{mid}": "422",  # the same, or a status change
}
DEFAULT_ACCEPT = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]


def _accept(name: str) -> str:
    """The operation's positive-data statuses line, when it has a semantic rejection."""
    if name not in SEMANTIC:
        return ""
    statuses = ", ".join(f'"{x}"' for x in [*DEFAULT_ACCEPT, SEMANTIC[name]])
    return f"checks.positive_data_acceptance.expected-statuses = [{statuses}]\n"


def _semantic(done: set[str]) -> list[str]:
    """A block for each semantic operation that has no block of its own (one block per name)."""
    return [
        f'[[operations]]\ninclude-name = "{name}"\n{_accept(name)}'
        for name in SEMANTIC
        if name not in done
    ]


def _config(ids: dict, key: str) -> str:
    done: set[str] = set()

    def op(name: str, **params: str) -> str:
        # one exact operation name per block (several include-* filters in a block match any)
        body = ", ".join(f'"path.{k}" = "{v}"' for k, v in params.items())
        done.add(name)
        return (
            f'[[operations]]\ninclude-name = "{name}"\nparameters = {{ {body} }}\n{_accept(name)}'
        )

    crud = []
    for kind in ("projects", "agents"):
        one = ids[kind[:-1]]
        crud += [
            op(f"GET /api/{kind}/{{obj_id}}", obj_id=one),
            op(f"PATCH /api/{kind}/{{obj_id}}", obj_id=one),
            op(f"DELETE /api/{kind}/{{obj_id}}", obj_id=ids[f"spare_{kind[:-1]}"]),
        ]
    memory = "/api/me/memories/{mid}"
    ws_memory = "/api/workspaces/{wid}/memories/{mid}"
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
            f'"path.wid" = "{ids["wid"]}"',
            f'"path.kid" = "{ids["spare_kid"]}"',
            "",
            *crud,
            op(f"GET {memory}", mid=ids["memory"]),
            op(f"PATCH {memory}", mid=ids["memory"]),
            op(f"GET {memory}/history", mid=ids["memory"]),
            op(f"DELETE {memory}", mid=ids["spare_memory"]),
            op(f"GET {ws_memory}", wid=ids["wid"], mid=ids["ws_memory"]),
            op(f"PATCH {ws_memory}", wid=ids["wid"], mid=ids["ws_memory"]),
            op(f"GET {ws_memory}/history", wid=ids["wid"], mid=ids["ws_memory"]),
            op(f"DELETE {ws_memory}", wid=ids["wid"], mid=ids["spare_ws_memory"]),
            op("DELETE /api/workspaces/{wid}", wid=ids["spare_wid"]),
            op("DELETE /api/conversations/{cid}", cid=ids["spare_cid"]),
            op(
                "DELETE /api/conversations/{cid}/messages/{mid}",
                cid=ids["round_cid"],
                mid=ids["spare_mid"],
            ),
            op("DELETE /api/conversations/{cid}/share", cid=ids["shared_cid"]),
            *_semantic(done),  # after every op() above: they fill ``done``
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
        # one worker: schemathesis' workers are threads, and hypothesis is not thread-safe (its
        # recursion-limit and global-random handling race), which surfaced as a rare internal
        # SystemError on POST /v1/chat/completions — the deepest request schema — not a check
        # failure. On a shared 2-core box a second thread bought little time anyway.
        "--workers",
        "1",
        "--seed",
        "14",
        "--no-color",
        # generation speed is the fuzzer's, not the API's: on a loaded 2-core box the largest
        # bodies (/rpc/chat/inbox) miss hypothesis' deadline for drawing examples
        "--suppress-health-check=too_slow",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    out = r.stdout + r.stderr
    (tmp_path / "schemathesis.out").write_text(out)
    failures = out.find("=== FAILURES ===")
    if failures >= 0:
        out = out[failures:]
    assert r.returncode == 0, out[-20000:]
    assert "Tested: " in out, out[-5000:]

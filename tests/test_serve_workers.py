"""``chatmem serve --workers N``: N server processes on one port, each with its own runtime
(sweeper, job worker, leases) coordinated through the database like replicas. A real server with
two workers streams a turn and resumes it over fresh connections (the kernel hands each new
connection to either process) on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from chatmem.cli.main import default_workers
from tests.servers import CHATMEM, Server, chatmem_env, create_user
from tests.test_crash import deltas, sse_until

pytestmark = pytest.mark.slow

ENV = {
    "CHATMEM_DEMO_DELAY_MS": "15",
    "CHATMEM_DEMO_MIN_TOKENS": "120",
    "CHATMEM_DEFAULT_MODEL": "demo",
    "CHATMEM_SWEEP_INTERVAL_S": "0.5",
}


def worker_processes(pid: int) -> list[int]:
    """The uvicorn worker processes under ``pid`` (multiprocessing's spawned children)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = []
    for c in children:
        try:
            cmd = Path(f"/proc/{c}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"spawn_main" in cmd:
            found.append(int(c))
    return found


def test_two_workers_stream_and_resume(db_url):
    key = create_user(db_url, "workers@example.com")
    headers = {"Authorization": f"Bearer {key}"}
    server = Server(db_url, env_extra=ENV, args=("--workers", "2")).start()
    try:
        assert server.proc is not None
        assert len(worker_processes(server.proc.pid)) == 2
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
            cid = c.post("/api/conversations", json={}).json()["id"]
            r = c.post(f"/api/conversations/{cid}/messages", json={"content": "two workers"})
            assert r.status_code == 202, r.text
            mid = r.json()["assistant_message_id"]
        url = f"/api/conversations/{cid}/messages/{mid}/stream"
        events: list[dict] = []
        # each piece on a new connection: either worker may answer, the log is the database's
        for _ in range(3):
            with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
                after = events[-1]["seq"] if events else 0
                events += sse_until(c, url, after=after, min_deltas=2)
            if events[-1]["type"] == "done":
                break
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
            events += sse_until(c, url, after=events[-1]["seq"])
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "done"
        assert "recovered" not in events[-1]["data"]
        for _ in range(4):  # a full replay on fresh connections is the same log
            with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
                assert sse_until(c, url) == events
                msg = c.get(f"/api/conversations/{cid}/messages/{mid}").json()
                assert msg["status"] == "complete" and msg["text"] == deltas(events)
    finally:
        server.stop()
    assert server.proc is not None and server.proc.returncode is not None


def test_default_workers():
    assert default_workers("sqlite:///./x.db") == 1
    assert default_workers("postgresql://u@h/db") >= 1


def test_workers_refuse_the_admin_listener(tmp_path):
    url = f"sqlite:///{tmp_path}/w.db"
    env = chatmem_env(url, CHATMEM_ADMIN_LISTEN="127.0.0.1:9464")
    r = subprocess.run(
        [CHATMEM, "serve", "--workers", "2"], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2
    assert "CHATMEM_ADMIN_LISTEN" in r.stderr and "--workers 1" in r.stderr

"""Two ``chatmem serve`` processes on one database: a turn started on one is resumed on the other
(which tails the durable log), and a stop sent to the other ends it. PostgreSQL is the production
setup; the same runs on one SQLite file shared by two processes."""

from __future__ import annotations

import httpx
import pytest

from tests.servers import Server, create_user
from tests.test_crash import deltas, sse_until

pytestmark = pytest.mark.slow

ENV = {
    "CHATMEM_DEMO_DELAY_MS": "15",
    "CHATMEM_DEMO_MIN_TOKENS": "120",
    "CHATMEM_DEFAULT_MODEL": "demo",
    "CHATMEM_SWEEP_INTERVAL_S": "0.5",
}


def test_start_on_one_replica_resume_on_another(db_url):
    key = create_user(db_url, "replica@example.com")
    headers = {"Authorization": f"Bearer {key}"}
    a = Server(db_url, env_extra=ENV).start()
    b = Server(db_url, env_extra=ENV).start()
    try:
        with (
            httpx.Client(base_url=a.base, headers=headers, timeout=60) as ca,
            httpx.Client(base_url=b.base, headers=headers, timeout=60) as cb,
        ):
            cid = ca.post("/api/conversations", json={}).json()["id"]
            r = ca.post(f"/api/conversations/{cid}/messages", json={"content": "across replicas"})
            assert r.status_code == 202, r.text
            mid = r.json()["assistant_message_id"]
            url = f"/api/conversations/{cid}/messages/{mid}/stream"
            first = sse_until(cb, url, min_deltas=3)  # B follows while A is generating
            assert first[0]["type"] == "message_start"
            rest = sse_until(cb, url, after=first[-1]["seq"])  # then resumes on B to the end
            on_b = first + rest
            assert [e["seq"] for e in on_b] == list(range(1, len(on_b) + 1))
            assert on_b[-1]["type"] == "done"
            on_a = sse_until(ca, url)
            assert on_a == on_b
            msg = cb.get(f"/api/conversations/{cid}/messages/{mid}").json()
            assert msg["status"] == "complete" and msg["text"] == deltas(on_b)
            # B refuses a double submit for a turn running on A, and stops it
            r = ca.post(f"/api/conversations/{cid}/messages", json={"content": "stop me"})
            mid2 = r.json()["assistant_message_id"]
            r = cb.post(f"/api/conversations/{cid}/messages", json={"content": "stop me"})
            assert r.status_code == 409
            sse_until(cb, f"/api/conversations/{cid}/messages/{mid2}/stream", min_deltas=2)
            r = cb.post(f"/api/conversations/{cid}/stop", json={"message_id": mid2})
            assert r.status_code == 200
            assert r.json()["messages"][0]["stop_reason"] == "stopped"
            events = sse_until(cb, f"/api/conversations/{cid}/messages/{mid2}/stream")
            assert events[-1]["type"] == "done" and events[-1]["data"]["stop_reason"] == "stopped"
            assert "recovered" not in events[-1]["data"]  # A ended it itself
    finally:
        a.stop()
        b.stop()

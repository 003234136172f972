"""Crash recovery with a real server: SIGKILL ``chatmem serve`` mid-stream, restart it, and find the
answer ended as error / generation_interrupted with the text flushed before the kill, and the resume
stream closing (with that error) instead of hanging. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import time

import httpx
import pytest

from chatmem.generation.sse import parse
from tests.servers import Server, create_user

pytestmark = pytest.mark.slow

ENV = {
    "CHATMEM_DEMO_DELAY_MS": "40",
    "CHATMEM_DEMO_MIN_TOKENS": "3000",
    "CHATMEM_LEASE_TTL_S": "2",
    "CHATMEM_SWEEP_INTERVAL_S": "0.3",
    "CHATMEM_DEFAULT_MODEL": "demo",
}


def sse_until(client: httpx.Client, url: str, *, after: int = 0, min_deltas: int | None = None):
    """Read an SSE stream; stop after ``min_deltas`` text deltas, else at its end."""
    events: list[dict] = []
    buf = ""
    with client.stream("GET", url, headers={"Last-Event-ID": str(after)}) as r:
        assert r.status_code == 200
        for chunk in r.iter_text():
            buf += chunk
            *complete, buf = buf.split("\n\n")
            events += parse("\n\n".join(complete) + "\n\n") if complete else []
            if (
                min_deltas is not None
                and sum(e["type"] == "text_delta" for e in events) >= min_deltas
            ):
                return events
    return events


def deltas(events) -> str:
    return "".join(e["data"]["text"] for e in events if e["type"] == "text_delta")


def test_sigkill_mid_stream_then_restart(db_url):
    key = create_user(db_url, "crash@example.com")
    headers = {"Authorization": f"Bearer {key}"}
    server = Server(db_url, env_extra=ENV).start()
    try:
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
            cid = c.post("/api/conversations", json={}).json()["id"]
            r = c.post(
                f"/api/conversations/{cid}/messages", json={"content": "tell me a long story"}
            )
            assert r.status_code == 202, r.text
            mid = r.json()["assistant_message_id"]
            seen = sse_until(c, f"/api/conversations/{cid}/messages/{mid}/stream", min_deltas=30)
            # wait until a flush has put partial text on the row (the path read shows it)
            for _ in range(600):
                msg = c.get(f"/api/conversations/{cid}/messages/{mid}").json()
                if msg["text"]:
                    break
                time.sleep(0.05)
            assert msg["status"] == "streaming" and msg["text"]
    finally:
        server.kill()  # SIGKILL: no shutdown hooks, no final flush
    client_text = deltas(seen)

    server = Server(db_url, env_extra=ENV, port=server.port).start()
    try:
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as c:
            # resuming from where the client was cut off: the stream closes with an error event
            tail = sse_until(
                c, f"/api/conversations/{cid}/messages/{mid}/stream", after=seen[-1]["seq"]
            )
            assert tail[-1]["type"] == "error"
            assert tail[-1]["data"]["code"] == "generation_interrupted"
            msg = c.get(f"/api/conversations/{cid}/messages/{mid}").json()
            assert msg["status"] == "error" and msg["error"] == "generation_interrupted"
            if tail[0]["type"] == "snapshot":
                # it saw events the dead process never saved: it gets the saved message instead
                assert [e["type"] for e in tail] == ["snapshot", "error"]
                assert tail[0]["data"]["message"]["text"] == msg["text"]
            else:  # the last flush covered all it saw: it gets exactly the rest of the log
                assert deltas(seen) + deltas(tail) == msg["text"]
            full = sse_until(c, f"/api/conversations/{cid}/messages/{mid}/stream")
            assert [e["seq"] for e in full] == list(range(1, len(full) + 1))
            assert full[-1]["type"] == "error"
            # the row holds exactly the durable deltas: what was flushed before the kill
            assert msg["text"] == deltas(full)
            assert msg["text"] and (
                client_text.startswith(msg["text"]) or msg["text"].startswith(client_text)
            )
            # the conversation goes on: a retry regenerates, a new message is accepted
            r = c.post(f"/api/conversations/{cid}/regenerate", json={"message_id": mid})
            assert r.status_code == 202, r.text
            c.post(f"/api/conversations/{cid}/stop", json={})
    finally:
        server.stop()

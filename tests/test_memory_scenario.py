"""Issue 5's scenario end to end through the HTTP API with the demo provider and the real job worker,
on SQLite and PostgreSQL: Alice in Paris → Berlin, the next context injects Berlin (not Paris),
disabling Berlin removes it, a second user sees and receives none of it."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from chatmem.db import schema as t
from chatmem.generation.sse import parse


async def _jobs_idle(rt, cid: str) -> None:
    for _ in range(400):
        async with rt.db.read() as c:
            rows = (
                await c.execute(
                    select(t.jobs.c.status, t.jobs.c.payload).where(
                        t.jobs.c.kind == "memory.extract"
                    )
                )
            ).all()
        mine = [r.status for r in rows if (r.payload or {}).get("conversation_id") == cid]
        if mine and all(s in ("done", "failed") for s in mine):
            assert "failed" not in mine
            return
        await asyncio.sleep(0.05)
    raise AssertionError("memory extraction never finished")


async def _turn(u, rt, cid: str, text: str) -> dict:
    """Send a message, read the stream to its end, wait for the memory job; the answer + report."""
    r = await u.client.post(f"/api/conversations/{cid}/messages", json={"content": text})
    assert r.status_code == 202, r.text
    ids = r.json()
    r = await u.client.get(
        f"/api/conversations/{cid}/messages/{ids['assistant_message_id']}/stream"
    )
    events = parse(r.text)
    assert events[-1]["type"] == "done", events[-1]
    answer = "".join(e["data"]["text"] for e in events if e["type"] == "text_delta")
    await _jobs_idle(rt, cid)
    r = await u.client.get(
        f"/api/conversations/{cid}/context", params={"message_id": ids["assistant_message_id"]}
    )
    assert r.status_code == 200, r.text
    return {"answer": answer, "report": r.json(), **ids}


def _memory_ids(report: dict) -> list[str]:
    rep = report.get("report", report)
    return list(rep.get("memory_ids") or [])


async def test_alice_paris_berlin_scenario(app, new_user):
    rt = app.state.runtime
    alice, bob = await new_user(), await new_user()
    cid = (await alice.client.post("/api/conversations", json={})).json()["id"]

    t1 = await _turn(alice, rt, cid, "My name is Alice and I live in Paris.")
    mems = (await alice.client.get("/api/me/memories")).json()["items"]
    by_slot = {m["slot"]: m for m in mems}
    assert set(by_slot) == {"name", "home_location"}
    name, paris = by_slot["name"], by_slot["home_location"]
    assert (name["memory_type"], name["value"], name["status"]) == ("identity", "Alice", "ACTIVE")
    assert (paris["memory_type"], paris["value"], paris["status"]) == (
        "location",
        "Paris",
        "ACTIVE",
    )
    for m in (name, paris):
        [src] = m["source_messages"]
        assert src["id"] == t1["user_message_id"] and src["role"] == "user"
        assert (
            src["excerpt"] == "My name is Alice and I live in Paris."
            and src["conversation_id"] == cid
        )

    await _turn(alice, rt, cid, "I moved to Berlin.")
    paris = (await alice.client.get(f"/api/me/memories/{paris['id']}")).json()
    berlin_list = (
        await alice.client.get(
            "/api/me/memories", params={"slot": "home_location", "status": "ACTIVE"}
        )
    ).json()["items"]
    [berlin] = berlin_list
    assert berlin["value"] == "Berlin" and paris["status"] == "STALE"
    assert paris["superseded_by"] == [berlin["id"]] and berlin["supersedes"] == [paris["id"]]

    t3 = await _turn(alice, rt, cid, "Where do I live now?")
    injected = _memory_ids(t3["report"])
    assert berlin["id"] in injected and name["id"] in injected and paris["id"] not in injected
    assert "Berlin" in t3["answer"] and "Paris" not in t3["answer"]

    r = await alice.client.patch(f"/api/me/memories/{berlin['id']}", json={"status": "DISABLED"})
    assert r.status_code == 200 and r.json()["status"] == "DISABLED"
    t4 = await _turn(alice, rt, cid, "And what is my name?")
    injected = _memory_ids(t4["report"])
    assert berlin["id"] not in injected and paris["id"] not in injected and name["id"] in injected
    assert "Berlin" not in t4["answer"] and "Alice" in t4["answer"]

    # a second user sees none of it and receives none of it
    assert (await bob.client.get("/api/me/memories")).json()["items"] == []
    for m in (name, paris, berlin):
        assert (await bob.client.get(f"/api/me/memories/{m['id']}")).status_code == 404
    bcid = (await bob.client.post("/api/conversations", json={})).json()["id"]
    tb = await _turn(bob, rt, bcid, "Where do I live, and what is my name?")
    assert _memory_ids(tb["report"]) == []
    for word in ("Alice", "Paris", "Berlin"):
        assert word not in tb["answer"]
    assert (await bob.client.get("/api/me/memories")).json()["items"] == []

"""A turn's start against concurrent writers, on SQLite and PostgreSQL.

PostgreSQL starts a question under the active leaf outside a transaction: the conversation is
read without a lock, then one statement takes the conversation's and the user's locks,
re-checks the leaf the rows were computed from, counts the user's live leases in a snapshot of
its own (``chatmem_live_leases``, migration 0024) and writes (``start_store.open_turn`` with a ``lock``);
when it writes nothing the locked transaction runs and says why. SQLite's ``BEGIN IMMEDIATE``
waits for the writer. Either way a start that waited behind another writer must behave as if it
had started after it: these tests hold the locks in a transaction of their own, let a start
wait on them, change what it read, and commit."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from chatmem.conversations import store
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.generation import leases
from chatmem.generation import store as gstore
from tests.test_generation import client_for, count, new_conv, running_app, stream

SLOW = {"model": "slow"}


async def _waiting(c, cid: str, body: dict) -> asyncio.Task:
    """A send started while the test holds the locks: it must still be waiting after 0.5 s."""
    task = asyncio.create_task(c.post(f"/api/conversations/{cid}/messages", json=body))
    await asyncio.sleep(0.5)
    assert not task.done(), task.result().text
    return task


async def test_a_start_that_waited_counts_the_leases_committed_meanwhile(db_url):
    """Cap 2, one turn running: a start that waited for the user's row while another
    transaction took the user's second lease answers 429 and writes nothing — its count is
    made after the lock, not in a snapshot from before it."""
    async with (
        running_app(db_url, max_concurrent_turns=2, run_worker=False) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        running = await new_conv(c)
        r = await c.post(f"/api/conversations/{running}/messages", json={"content": "a", **SLOW})
        assert r.status_code == 202, r.text
        other, late = await new_conv(c), await new_conv(c)
        before = await count(rt.db, t.messages)
        async with rt.db.write() as cx:  # the user's row locked (PostgreSQL), the writer (SQLite)
            await gstore.conversation_for_turn(cx, c.user_id, other)
            waiting = await _waiting(c, late, {"content": "b"})
            taken = await leases.acquire(
                cx, other, "root", c.user_id, "msg_x:held", 60_000, now_ms(), cap=2
            )
            assert taken is None
        r = await waiting
        assert r.status_code == 429, r.text
        assert r.json()["error"]["code"] == "too_many_turns"
        assert await count(rt.db, t.messages) == before
        assert await count(rt.db, t.conversation_generation_leases) == 2
        application.state.gated.gate.set()


async def test_a_start_that_waited_follows_the_leaf_committed_meanwhile(db_url):
    """A question sent under the active leaf while another transaction holds the conversation
    goes under the leaf that transaction committed (and counts on its counter); one that
    waited for a rename only goes under the leaf it saw and keeps the new title."""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "first"})
        first = r.json()
        assert (await stream(c, cid, first["assistant_message_id"]))[-1]["type"] == "done"
        async with rt.db.write() as cx:
            conv = await gstore.conversation_for_turn(cx, c.user_id, cid)
            waiting = await _waiting(c, cid, {"content": "after the held one"})
            held = await store.insert_message(
                cx,
                conv,
                parent_id=first["assistant_message_id"],
                role="user",
                blocks=[{"kind": "text", "text": "held"}],
                user_id=c.user_id,
            )
        r = await waiting
        assert r.status_code == 202, r.text
        second = r.json()
        assert (await stream(c, cid, second["assistant_message_id"]))[-1]["type"] == "done"
        async with rt.db.read() as cx:
            q = select(t.messages.c.parent_id).where(t.messages.c.id == second["user_message_id"])
            assert (await cx.execute(q)).scalar_one() == held.id
        async with rt.db.write() as cx:
            await gstore.conversation_for_turn(cx, c.user_id, cid)
            waiting = await _waiting(c, cid, {"content": "after the rename"})
            await store.update_conversation(cx, cid, title="renamed")
        r = await waiting
        assert r.status_code == 202, r.text
        third = r.json()
        assert (await stream(c, cid, third["assistant_message_id"]))[-1]["type"] == "done"
        got = (await c.get(f"/api/conversations/{cid}")).json()
        assert got["title"] == "renamed"
        assert got["active_leaf_id"] == third["assistant_message_id"]
        assert got["message_count"] == 7
        async with rt.db.read() as cx:
            q = select(t.messages.c.parent_id).where(t.messages.c.id == third["user_message_id"])
            assert (await cx.execute(q)).scalar_one() == second["assistant_message_id"]


async def test_starts_at_once_in_many_conversations_keep_the_cap(db_url):
    """Eight questions sent at once by one user, cap 3: three start, five answer 429, and only
    the three wrote anything."""
    async with (
        running_app(db_url, max_concurrent_turns=3, run_worker=False) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        cids = [await new_conv(c) for _ in range(8)]
        replies = await asyncio.gather(
            *(
                c.post(f"/api/conversations/{x}/messages", json={"content": "go", **SLOW})
                for x in cids
            )
        )
        codes = sorted(r.status_code for r in replies)
        assert codes == [202] * 3 + [429] * 5, [r.text for r in replies]
        assert await count(rt.db, t.messages) == 6
        assert await count(rt.db, t.conversation_generation_leases) == 3
        application.state.gated.gate.set()
        for x, r in zip(cids, replies, strict=True):
            if r.status_code == 202:
                assert (await stream(c, x, r.json()["assistant_message_id"]))[-1]["type"] == "done"

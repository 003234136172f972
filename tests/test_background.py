"""Background work at scale: the sweeper reads only streaming rows, pruning and reaping delete in
small batches, and the deployment-wide chores run in one process at a time (a lease)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, insert, select

from chatmem.app import create_runtime
from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db import singleton
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.generation import sweeper as sw
from chatmem.jobs import worker as wk

from .conftest import make_settings

E = t.stream_events.c


@pytest.fixture
async def two(db_url):
    """Two runtimes on one database: two processes of one deployment."""
    made = [
        create_runtime(make_settings(db_url, event_retention_s=0), db=Database(db_url))
        for _ in range(2)
    ]
    yield made
    for rt in made:
        await rt.db.dispose()


async def _conversation(db, user_id: str) -> str:
    cid = new_id("c")
    async with db.write() as c:
        await c.execute(
            insert(t.conversations).values(id=cid, user_id=user_id, created_at=1, updated_at=1)
        )
    return cid


async def _message_with_log(db, cid, uid, status: str, events: int, at: int) -> str:
    mid = new_id("msg")
    async with db.write() as c:
        await c.execute(
            insert(t.messages).values(
                id=mid,
                conversation_id=cid,
                role="assistant",
                status=status,
                user_id=uid,
                created_at=at,
            )
        )
        rows = [
            {"message_id": mid, "seq": s, "type": "text_delta", "data": {}, "created_at": at + s}
            for s in range(1, events + 1)
        ]
        await c.execute(insert(t.stream_events), rows)
    return mid


async def _log_sizes(db) -> dict[str, int]:
    async with db.read() as c:
        q = select(E.message_id, func.count()).group_by(E.message_id)
        return {r[0]: r[1] for r in (await c.execute(q)).all()}


async def test_pruning_goes_in_small_batches_and_spares_live_and_recent_logs(two, monkeypatch):
    rt, _ = two
    monkeypatch.setattr(sw, "PRUNE_BATCH", 7)
    user, _ = await auth_service.create_user(rt.db, "prune@example.com")
    cid = await _conversation(rt.db, user["id"])
    old = now_ms() - 10_000
    done = [await _message_with_log(rt.db, cid, user["id"], "complete", 20, old) for _ in range(3)]
    live = await _message_with_log(rt.db, cid, user["id"], "streaming", 20, old)
    future = await _message_with_log(rt.db, cid, user["id"], "complete", 5, now_ms() + 60_000)
    sweeper = sw.Sweeper(rt)
    assert await sweeper.prune_once() == 60
    assert sweeper.last_prune.batches >= 60 // 7  # never one big delete
    sizes = await _log_sizes(rt.db)
    assert all(m not in sizes for m in done)
    assert sizes[live] == 20, "a streaming row's log is what its answer is rebuilt from"
    assert sizes[future] == 5, "a log with recent events stays whole"


async def test_one_process_prunes_at_a_time_and_hands_over_on_stop(two):
    a, b = two
    user, _ = await auth_service.create_user(a.db, "lease@example.com")
    cid = await _conversation(a.db, user["id"])
    for _ in range(2):
        await _message_with_log(a.db, cid, user["id"], "complete", 3, now_ms() - 10_000)
    first, second = sw.Sweeper(a), sw.Sweeper(b)
    assert await first.prune_once() == 6
    await _message_with_log(a.db, cid, user["id"], "complete", 3, now_ms() - 10_000)
    assert await second.prune_once() == 0, "the other process holds the pruning lease"
    await first.stop()  # a clean stop releases it
    assert await second.prune_once() == 3
    async with a.db.read() as c:
        assert await singleton.holder_of(c, sw.PRUNE_LEASE) == b.instance_id


async def test_lease_is_taken_over_once_expired(two):
    a, b = two
    async with a.db.write() as c:
        assert await singleton.hold(c, "chore", a.instance_id, ttl_ms=60_000)
        assert not await singleton.hold(c, "chore", b.instance_id, ttl_ms=60_000)
        assert await singleton.hold(c, "chore", a.instance_id, ttl_ms=-1)  # renewed, expired
        assert await singleton.hold(c, "chore", b.instance_id, ttl_ms=60_000)
        assert await singleton.holder_of(c, "chore") == b.instance_id


async def test_reaping_old_jobs_in_batches_by_one_process(two, monkeypatch):
    a, b = two
    monkeypatch.setattr(wk, "REAP_BATCH", 4)
    now = now_ms()
    rows = [
        {
            "id": new_id("job"),
            "kind": "k",
            "status": status,
            "run_after": 0,
            "created_at": 0,
            "updated_at": at,
        }
        for status, at in [("done", 0)] * 10 + [("done", now), ("failed", 0), ("queued", 0)]
    ]
    async with a.db.write() as c:
        await c.execute(insert(t.jobs), rows)
    assert await wk.reap(b.db, keep_done_ms=60_000, holder=b.instance_id) == 10
    assert await wk.reap(a.db, keep_done_ms=60_000, holder=a.instance_id) == 0  # b holds it
    async with a.db.read() as c:
        left = sorted(r.status for r in (await c.execute(select(t.jobs.c.status))).all())
    assert left == ["done", "failed", "queued"]  # recent, failed and queued jobs stay

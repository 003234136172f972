"""Worker heartbeats: each running job worker says "still here" in the ``workers`` table.

Why it exists: an API replica started with ``--no-worker`` cannot see from its own process
whether any worker runs the queue; without one, titles, memories and compaction silently stop.
Each ``Worker`` upserts its row every ``worker_heartbeat_s`` and deletes it on a clean stop;
``/api/ready`` and the ``chatmem_workers_alive`` metric count rows seen recently. A worker that
died leaves a stale row, which stops counting once older than ``ready_worker_max_age_s`` and is
deleted after ``STALE_DELETE_MS``.
"""

from __future__ import annotations

import os
import socket

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert

W = t.workers.c
STALE_DELETE_MS = 24 * 3600 * 1000


async def beat(db, worker_id: str, kinds: list[str], started_at: int) -> None:
    """Insert or refresh this worker's row (and forget workers dead for a day)."""
    async with db.write() as c:
        now = now_ms()
        stmt = insert(c, t.workers).values(
            id=worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            kinds=kinds,
            started_at=started_at,
            seen_at=now,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"], set_={"seen_at": now, "kinds": kinds}
        )
        await c.execute(stmt)
        await c.execute(delete(t.workers).where(W.seen_at < now - STALE_DELETE_MS))


async def remove(db, worker_id: str) -> None:
    async with db.write() as c:
        await c.execute(delete(t.workers).where(W.id == worker_id))


async def alive(c: AsyncConnection, max_age_ms: int) -> tuple[int, int | None]:
    """(workers seen within ``max_age_ms``, age in ms of the newest heartbeat or None)."""
    now = now_ms()
    row = (
        await c.execute(
            select(
                func.count().filter(W.seen_at >= now - max_age_ms),
                func.max(W.seen_at),
            )
        )
    ).one()
    newest = None if row[1] is None else max(0, now - int(row[1]))
    return int(row[0] or 0), newest

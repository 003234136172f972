"""Enqueue jobs: the write side of the database job queue.

``enqueue`` takes an open write connection so a job is committed atomically with the change that
caused it (a finished turn and its memory-extraction job land together or not at all). A dedupe
key collapses repeated requests while one is still queued: the partial unique index on
``dedupe_key WHERE status = 'queued'`` makes that race-free (insert-on-conflict-do-nothing), so two
replicas enqueueing the same key at once still leave one queued job.

Handlers are registered by kind in ``Runtime.job_handlers`` by the composition root
(``app.create_runtime``); the worker (see worker.py) claims jobs of those kinds and calls
``await fn(runtime, payload)``. A handler that raises is retried with backoff; raise
``Permanent`` to fail the job at once.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert
from ..db.ids import new_id

DEFAULT_MAX_ATTEMPTS = 5


class Permanent(Exception):
    """Raised by a handler for a failure that retrying cannot fix (the job fails at once)."""


async def enqueue(
    c: AsyncConnection,
    kind: str,
    payload: dict,
    *,
    dedupe_key: str | None = None,
    delay_ms: int = 0,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> str | None:
    """Insert a queued job; returns its id, or None when an equal dedupe key is already queued."""
    now = now_ms()
    jid = new_id("job")
    values = dict(
        id=jid,
        kind=kind,
        payload=payload,
        dedupe_key=dedupe_key,
        status="queued",
        run_after=now + delay_ms,
        max_attempts=max_attempts,
        created_at=now,
        updated_at=now,
    )
    stmt = insert(c, t.jobs).values(**values)
    if dedupe_key is not None:
        stmt = stmt.on_conflict_do_nothing(
            index_elements=["dedupe_key"], index_where=text("status = 'queued'")
        )
    res = await c.execute(stmt)
    return jid if res.rowcount == 1 else None

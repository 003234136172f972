"""Enqueue jobs and register their handlers.

``enqueue`` takes an open write connection so a job is committed atomically with the change that
caused it (a finished turn and its memory-extraction job land together or not at all). A dedupe
key collapses repeated requests while one is still queued.

Handlers are registered by kind with ``@handler("kind")``; the worker (see worker.py) claims jobs
and calls ``await fn(runtime, payload)``.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.ids import new_id

Handler = Callable[[Any, dict], Awaitable[None]]
HANDLERS: dict[str, Handler] = {}


def handler(kind: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        return fn

    return register


async def enqueue(c: AsyncConnection, kind: str, payload: dict, *, dedupe_key: str | None = None,
                  delay_ms: int = 0, max_attempts: int = 5) -> str | None:
    """Insert a queued job; returns its id, or None when an equal dedupe key is already queued."""
    J = t.jobs.c
    if dedupe_key is not None:
        existing = (await c.execute(select(J.id).where(J.dedupe_key == dedupe_key,
                                                       J.status == "queued"))).scalar()
        if existing:
            return None
    now = now_ms()
    jid = new_id("job")
    await c.execute(insert(t.jobs).values(
        id=jid, kind=kind, payload=payload, dedupe_key=dedupe_key, status="queued",
        run_after=now + delay_ms, max_attempts=max_attempts, created_at=now, updated_at=now))
    return jid

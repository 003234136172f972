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

import functools
from dataclasses import dataclass, field

from sqlalchemy import bindparam, select, text, union_all
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert
from ..db.ids import new_id

DEFAULT_MAX_ATTEMPTS = 5


class Permanent(Exception):
    """Raised by a handler for a failure that retrying cannot fix (the job fails at once)."""


@dataclass(frozen=True)
class Job:
    """One job to queue with ``enqueue_many`` (the arguments of ``enqueue``)."""

    kind: str
    payload: dict = field(default_factory=dict)
    dedupe_key: str | None = None
    delay_ms: int = 0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


def _row(job: Job, now: int) -> dict:
    return dict(
        id=new_id("job"),
        kind=job.kind,
        payload=job.payload,
        dedupe_key=job.dedupe_key,
        status="queued",
        run_after=now + job.delay_ms,
        max_attempts=job.max_attempts,
        created_at=now,
        updated_at=now,
    )


def _skip_queued(stmt):
    """A row whose dedupe key is already queued is left out (rows without a key never are)."""
    return stmt.on_conflict_do_nothing(
        index_elements=["dedupe_key"], index_where=text("status = 'queued'")
    )


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
    job = Job(kind, payload, dedupe_key, delay_ms, max_attempts)
    values = _row(job, now_ms())
    stmt = insert(c, t.jobs).values(**values)
    if dedupe_key is not None:
        stmt = _skip_queued(stmt)
    res = await c.execute(stmt)
    return values["id"] if res.rowcount == 1 else None


@functools.cache
def _many_statement(dialect: str):
    """``enqueue_many``'s INSERT, built and compiled once: SQLAlchemy sends a list of rows as one
    multi-row INSERT (its "insertmanyvalues", which RETURNING selects), where an INSERT carrying
    the rows in its VALUES was compiled anew on every call (~2 ms of CPU)."""
    ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(t.jobs)
    return _skip_queued(ins).returning(t.jobs.c.id)


async def enqueue_many(c: AsyncConnection, jobs: list[Job]) -> None:
    """Queue several jobs in one multi-row INSERT (what a finished turn schedules), each skipped
    as ``enqueue`` would skip it when its dedupe key is already queued."""
    if jobs:
        now = now_ms()
        await hot.execute(c, _many_statement(c.dialect.name), [_row(j, now) for j in jobs])


#: The columns ``_row`` fills, in order (``insert_after``'s parameters: ``j<i>_<column>``).
_COLUMNS = (
    "id",
    "kind",
    "payload",
    "dedupe_key",
    "status",
    "run_after",
    "max_attempts",
    "created_at",
    "updated_at",
)


def insert_after(source, n: int):
    """PostgreSQL: an INSERT of ``n`` jobs (``job_params``) for each row of ``source`` (a CTE
    of the caller's statement that yields one row or none), each skipped as ``enqueue`` would
    skip it — to run as a data-modifying CTE of that statement: the jobs are written by the
    statement that writes what they follow, and only if it wrote it."""
    rows = [
        select(*(bindparam(f"j{i}_{k}", type_=t.jobs.c[k].type) for k in _COLUMNS)).select_from(
            source
        )
        for i in range(n)
    ]
    jobs = rows[0] if n == 1 else union_all(*rows)
    return _skip_queued(postgresql.insert(t.jobs).from_select(list(_COLUMNS), jobs))


def job_params(jobs: list[Job], now: int) -> dict:
    """``insert_after``'s parameters for ``jobs``."""
    return {f"j{i}_{k}": v for i, job in enumerate(jobs) for k, v in _row(job, now).items()}


def job_rows(jobs: list[Job], now: int) -> list[dict]:
    """The ``jobs`` rows of ``jobs`` (what ``enqueue_many`` inserts), for a statement that
    inserts them itself from one JSON array: PostgreSQL's ``chatmem_append_logged`` (migration
    0022), which skips each whose dedupe key is queued, as ``insert_after`` does."""
    return [_row(j, now) for j in jobs]

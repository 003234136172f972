"""The job worker: claims queued jobs from the database and runs their handlers.

Any number of workers (threads of one process, processes, replicas) share one ``jobs`` table:
- **claim** is one statement — ``UPDATE … WHERE id = (SELECT … LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING`` on PostgreSQL, the same without the row lock inside SQLite's single-writer
  ``BEGIN IMMEDIATE`` transaction — so a job is handed to exactly one worker;
- a claimed job carries ``locked_until`` (the **visibility timeout**), extended by a heartbeat while
  the handler runs; a job whose worker died (SIGKILL, power loss) becomes claimable again once it
  passes, and is marked failed instead when its attempts are used up;
- a handler that raises is **retried with exponential backoff** (``job_backoff_s`` · 2^(n-1), capped
  at ``job_backoff_max_s``) until ``max_attempts``; then the job is kept with status ``failed`` and
  its ``last_error``; ``Permanent`` fails it at once;
- completion and failure are written only while the worker still holds the job (``locked_by``), so
  a worker that lost its lock cannot overwrite the new holder's result. Handlers must therefore be
  idempotent — a job may run more than once.

``Worker`` is a runtime service (async ``start()``/``stop()``); ``run_once()`` claims and runs one
job and is what tests drive directly. While started it also writes its heartbeat (heartbeat.py)
and reports each attempt to ``rt.telemetry`` (lag from due to claim, duration, outcome).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import time
import traceback
import uuid
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from ..db import hot, singleton
from ..db import schema as t
from ..db.clock import now_ms
from ..errors import Conflict, NotFound
from ..runtime import Runtime
from . import heartbeat as hb
from .queue import Permanent

log = logging.getLogger(__name__)
J = t.jobs.c
ERROR_MAX_CHARS = 4000


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def backoff_ms(attempts: int, base_s: float, cap_s: float) -> int:
    """Delay before retry number ``attempts`` (1-based), exponential and capped."""
    return int(min(cap_s, base_s * (2 ** max(attempts - 1, 0))) * 1000)


def _due(now: Any, kinds: Any) -> list:
    due = or_(
        and_(J.status == "queued", J.run_after <= now),
        and_(J.status == "running", J.locked_until < now, J.attempts < J.max_attempts),
    )
    return [due] if kinds is None else [due, J.kind.in_(kinds)]


@functools.cache
def _any_due(filtered: bool):
    """Is a job due? The idle poll's read, built once (a poll every ``job_poll_interval_s`` in
    every process: building and keying the statement anew cost more than running it)."""
    kinds: Any = bindparam("kinds", expanding=True) if filtered else None
    return select(J.id).where(*_due(bindparam("now", type_=J.run_after.type), kinds)).limit(1)


async def claim(
    db, worker_id: str, *, visibility_ms: int, kinds: list[str] | None = None
) -> dict | None:
    """Atomically take the next runnable job (queued and due, or running with an expired lock)."""
    # A plain read first: idle polling must not take SQLite's single write lock (one statement,
    # no transaction around it: on PostgreSQL, no BEGIN and COMMIT round trips either).
    probe = {"now": now_ms(), **({} if kinds is None else {"kinds": list(kinds)})}
    async with db.read_once() as c:
        if (await hot.execute(c, _any_due(kinds is not None), probe)).first() is None:
            return None
    now = now_ms()
    params = {**probe, "now": now, "locked_until": now + visibility_ms, "worker": worker_id}
    async with db.write_once() as c:  # one statement: it takes the job or nothing
        row = (await hot.execute(c, _take(c.dialect.name, kinds is not None), params)).first()
    return dict(row._mapping) if row else None


@functools.cache
def _take(dialect: str, filtered: bool):
    """``claim``'s UPDATE of the next due job, built once per (dialect, kinds filter): a job was
    claimed after every turn (its memory or title job), and the statement built per claim."""
    sub = _any_due(filtered).order_by(J.run_after, J.id)  # the probe's row, the oldest first
    if dialect == "postgresql":
        sub = sub.with_for_update(skip_locked=True)
    return (
        update(t.jobs)
        .where(J.id == sub.scalar_subquery())
        .values(
            status="running",
            attempts=J.attempts + 1,
            locked_by=bindparam("worker"),
            locked_until=bindparam("locked_until", type_=J.locked_until.type),
            updated_at=bindparam("now", type_=J.run_after.type),
        )
        .returning(J.id, J.kind, J.payload, J.attempts, J.max_attempts, J.dedupe_key, J.run_after)
    )


async def heartbeat(db, job_id: str, worker_id: str, visibility_ms: int) -> bool:
    """Extend the lock; False when this worker no longer holds the job."""
    async with db.write() as c:
        now = now_ms()
        res = await c.execute(
            update(t.jobs)
            .where(J.id == job_id, J.locked_by == worker_id, J.status == "running")
            .values(locked_until=now + visibility_ms, updated_at=now)
        )
    return res.rowcount == 1


async def complete(db, job_id: str, worker_id: str) -> bool:
    params = {"job": job_id, "worker": worker_id, "now": now_ms()}
    async with db.write_once() as c:  # one statement, built once (a job after every turn)
        return (await hot.execute(c, _COMPLETE, params)).first() is not None


_COMPLETE = (
    update(t.jobs)
    .where(J.id == bindparam("job"), J.locked_by == bindparam("worker"), J.status == "running")
    .values(status="done", locked_until=None, last_error="", updated_at=bindparam("now"))
    .returning(J.id)
)


async def fail(
    db,
    job: dict,
    worker_id: str,
    error: str,
    *,
    permanent: bool,
    base_s: float,
    cap_s: float,
    requeue_now: bool = False,
) -> str:
    """Record a failure: back to ``queued`` with a delay, or ``failed`` for good. Returns the status."""
    error = error[-ERROR_MAX_CHARS:]
    async with db.write() as c:
        now = now_ms()
        owned = and_(J.id == job["id"], J.locked_by == worker_id, J.status == "running")
        retry = requeue_now or (not permanent and job["attempts"] < job["max_attempts"])
        if retry:
            values: dict[str, Any] = dict(
                status="queued",
                locked_by="",
                locked_until=None,
                last_error=error,
                updated_at=now,
                run_after=now if requeue_now else now + backoff_ms(job["attempts"], base_s, cap_s),
            )
            if requeue_now:  # not the job's fault (worker shutdown): give the attempt back
                values["attempts"] = J.attempts - 1
            try:
                async with c.begin_nested():
                    res = await c.execute(update(t.jobs).where(owned).values(**values))
                return "queued" if res.rowcount == 1 else "lost"
            except IntegrityError:  # an equal dedupe key was queued meanwhile: it will do the work
                error += " (retry folded into the queued job with the same dedupe key)"
        res = await c.execute(
            update(t.jobs)
            .where(owned)
            .values(status="failed", locked_until=None, last_error=error, updated_at=now)
        )
        return "failed" if res.rowcount == 1 else "lost"


#: Finished jobs deleted per transaction by ``reap``, and the lease that makes it one process's job.
REAP_BATCH = 500
REAP_LEASE = "reap-jobs"


async def reap(db, *, keep_done_ms: int, holder: str | None = None) -> int:
    """Fail running jobs whose lock expired with no attempts left; drop old finished jobs in
    batches of ``REAP_BATCH`` by ``ix_jobs_status_updated``, each its own short transaction.
    With ``holder``, the deletion runs only in the process holding the ``reap-jobs`` lease.
    Returns how many finished jobs were deleted."""
    async with db.write() as c:
        now = now_ms()
        await c.execute(
            update(t.jobs)
            .where(J.status == "running", J.locked_until < now, J.attempts >= J.max_attempts)
            .values(
                status="failed",
                locked_until=None,
                updated_at=now,
                last_error="visibility timeout passed with no attempts left (worker lost)",
            )
        )
        if holder is not None and not await singleton.hold(c, REAP_LEASE, holder, 600_000):
            return 0
    cutoff = now - keep_done_ms
    old = (
        select(J.id)
        .where(J.status == "done", J.updated_at < cutoff)
        .order_by(J.updated_at)
        .limit(REAP_BATCH)
    )
    deleted = 0
    while True:
        async with db.write() as c:
            n = (await c.execute(delete(t.jobs).where(J.id.in_(old)))).rowcount
        deleted += n or 0
        if not n or n < REAP_BATCH:
            return deleted
        await asyncio.sleep(0.01)  # let other writers in between batches


def job_out(row) -> dict:
    m = row._mapping
    return {
        k: m[k]
        for k in (
            "id",
            "kind",
            "payload",
            "dedupe_key",
            "status",
            "run_after",
            "attempts",
            "max_attempts",
            "locked_by",
            "locked_until",
            "last_error",
            "created_at",
            "updated_at",
        )
    }


async def list_recent(db, *, status: str | None, kind: str | None, limit: int) -> dict:
    """Newest-updated jobs first (the operators' view; failed ones keep ``last_error``)."""
    q = select(t.jobs)
    if status:
        q = q.where(J.status == status)
    if kind:
        q = q.where(J.kind == kind)
    async with db.read() as c:
        rows = (await c.execute(q.order_by(J.updated_at.desc(), J.id.desc()).limit(limit))).all()
    return {"items": [job_out(r) for r in rows], "next_cursor": None}


async def retry_failed(db, job_id: str) -> dict:
    """A failed job queued again: due now, attempts from zero, its last error kept until the
    next attempt. 404 for an unknown id, 409 unless it failed (or when an identical job is
    already queued: the dedupe key is unique among queued jobs)."""
    now = now_ms()
    try:
        async with db.write() as c:
            row = (await c.execute(select(t.jobs).where(J.id == job_id))).first()
            if row is None:
                raise NotFound(f"no job {job_id!r}")
            if row.status != "failed":
                raise Conflict(f"the job is {row.status}, not failed", code="not_failed")
            q = update(t.jobs).where(J.id == job_id, J.status == "failed")
            await c.execute(
                q.values(status="queued", attempts=0, run_after=now, locked_by="", updated_at=now)
            )
            row = (await c.execute(select(t.jobs).where(J.id == job_id))).one()
    except IntegrityError:
        raise Conflict("an identical job is already queued", code="duplicate_job") from None
    return job_out(row)


async def queue_stats(c) -> tuple[list[tuple[str, str, int]], dict[str, float]]:
    """(kind, status, count) of the unfinished and failed jobs, and per kind how long the oldest
    due queued job has waited, in seconds (the metrics' queue gauges)."""
    rows = (
        await c.execute(
            select(J.kind, J.status, func.count())
            .where(J.status.in_(("queued", "running", "failed")))
            .group_by(J.kind, J.status)
        )
    ).all()
    now = now_ms()
    due = (
        await c.execute(
            select(J.kind, func.min(J.run_after))
            .where(J.status == "queued", J.run_after <= now)
            .group_by(J.kind)
        )
    ).all()
    oldest = {kind: max(0.0, (now - int(first)) / 1000) for kind, first in due}
    return [(r[0], r[1], int(r[2])) for r in rows], oldest


class Worker:
    """Runs jobs in this process until stopped (a Runtime service)."""

    def __init__(
        self,
        rt: Runtime,
        *,
        worker_id: str | None = None,
        concurrency: int = 1,
        kinds: list[str] | None = None,
    ) -> None:
        self.rt = rt
        self.id = worker_id or new_worker_id()
        self.concurrency = max(1, concurrency)
        self.kinds = kinds
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._loops = 0
        self.started_at = now_ms()

    @property
    def _visibility_ms(self) -> int:
        return int(self.rt.settings.job_visibility_timeout_s * 1000)

    def _kinds(self) -> list[str]:
        return self.kinds if self.kinds is not None else sorted(self.rt.job_handlers)

    async def run_once(self) -> dict | None:
        """Claim one job and run it; the claimed job (with its outcome) or None when idle."""
        s = self.rt.settings
        kinds = self._kinds()
        if not kinds:
            return None
        job = await claim(self.rt.db, self.id, visibility_ms=self._visibility_ms, kinds=kinds)
        if job is None:
            return None
        tel = self.rt.telemetry
        tel.job_claimed(job["kind"], (now_ms() - int(job.get("run_after") or now_ms())) / 1000)
        fn = self.rt.job_handlers.get(job["kind"])
        beat = asyncio.create_task(self._heartbeat(job["id"]))
        t0 = time.monotonic()
        try:
            if fn is None:
                raise Permanent(f"no handler for job kind {job['kind']!r}")
            await fn(self.rt, job["payload"] or {})
        except asyncio.CancelledError:
            await fail(
                self.rt.db,
                job,
                self.id,
                "worker stopped",
                permanent=False,
                base_s=s.job_backoff_s,
                cap_s=s.job_backoff_max_s,
                requeue_now=True,
            )
            raise
        except Exception as e:
            permanent = isinstance(e, Permanent)
            err = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}"
            job["outcome"] = await fail(
                self.rt.db,
                job,
                self.id,
                err,
                permanent=permanent,
                base_s=s.job_backoff_s,
                cap_s=s.job_backoff_max_s,
            )
            log.warning(
                "job %s (%s) attempt %s failed: %s", job["id"], job["kind"], job["attempts"], e
            )
        else:
            job["outcome"] = "done" if await complete(self.rt.db, job["id"], self.id) else "lost"
        finally:
            beat.cancel()
        outcome = {"queued": "retry"}.get(job.get("outcome", ""), job.get("outcome", "lost"))
        tel.job_finished(job["kind"], outcome, time.monotonic() - t0)
        return job

    async def _heartbeat(self, job_id: str) -> None:
        interval = max(self._visibility_ms / 3000, 0.05)
        try:
            while True:
                await asyncio.sleep(interval)
                if not await heartbeat(self.rt.db, job_id, self.id, self._visibility_ms):
                    log.warning("job %s: lock lost (another worker may run it again)", job_id)
                    return
        except asyncio.CancelledError:
            pass

    async def _loop(self) -> None:
        poll = float(self.rt.settings.job_poll_interval_s)
        while not self._stopping.is_set():
            job = None
            try:
                self._loops += 1
                if self._loops % 200 == 1:
                    await reap(
                        self.rt.db,
                        keep_done_ms=int(self.rt.settings.job_keep_done_s * 1000),
                        holder=self.rt.instance_id,
                    )
                job = await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("job worker loop error")
            if job is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=poll)

    async def _beat_loop(self) -> None:
        """This worker's heartbeat (heartbeat.py), until stopped; stops at a wait."""
        every = float(self.rt.settings.worker_heartbeat_s)
        while not self._stopping.is_set():
            try:
                await hb.beat(self.rt.db, self.id, self._kinds(), self.started_at)
            except Exception as e:  # the next beat tries again
                log.warning("worker heartbeat failed: %s", type(e).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=every)

    async def start(self) -> None:
        self._stopping.clear()
        self._tasks = [
            asyncio.create_task(self._loop(), name=f"job-worker-{i}")
            for i in range(self.concurrency)
        ]
        self._tasks.append(asyncio.create_task(self._beat_loop(), name="job-worker-heartbeat"))

    async def stop(self, grace_s: float = 5.0) -> None:
        self._stopping.set()
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(self._tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        with contextlib.suppress(Exception):  # a dead database: the row goes stale instead
            await hb.remove(self.rt.db, self.id)

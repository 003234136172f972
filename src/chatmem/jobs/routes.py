"""The jobs feature: runs the in-process worker and lets admins see the queue.

``install(rt)`` registers a ``Worker`` on ``rt.services`` when ``rt.settings.run_worker`` is true
(``chatmem serve`` unless ``--no-worker``, and ``chatmem worker``), so starting the runtime starts
the worker and stopping it stops the worker. ``GET /api/admin/jobs`` lists jobs (failed ones keep
their ``last_error``) for operators.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select

from ..auth.deps import current_admin, get_runtime
from ..auth.models import Principal
from ..db import schema as t
from ..runtime import Runtime
from .worker import Worker

router = APIRouter(prefix="/api/admin/jobs", tags=["jobs"])
J = t.jobs.c
WORKER_KEY = "jobs.worker"


def install(rt: Runtime) -> None:
    if rt.settings.run_worker and WORKER_KEY not in rt.extras:
        worker = Worker(rt)
        rt.extras[WORKER_KEY] = worker
        rt.services.append(worker)


def job_out(row) -> dict:
    m = row._mapping
    return {k: m[k] for k in ("id", "kind", "payload", "dedupe_key", "status", "run_after",
                              "attempts", "max_attempts", "locked_by", "locked_until",
                              "last_error", "created_at", "updated_at")}


@router.get("")
async def list_jobs(status: Literal["queued", "running", "done", "failed"] | None = None,
                    kind: str | None = Query(None, max_length=100),
                    limit: int = Query(50, ge=1, le=500),
                    _p: Principal = Depends(current_admin), rt: Runtime = Depends(get_runtime)):
    q = select(t.jobs)
    if status:
        q = q.where(J.status == status)
    if kind:
        q = q.where(J.kind == kind)
    async with rt.db.read() as c:
        rows = (await c.execute(q.order_by(J.updated_at.desc(), J.id.desc()).limit(limit))).all()
    return {"items": [job_out(r) for r in rows], "next_cursor": None}

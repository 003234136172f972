"""The jobs feature: runs the in-process worker and lets admins see the queue.

``install(rt)`` registers a ``Worker`` on ``rt.services`` when ``rt.settings.run_worker`` is true
(``chatmem serve`` unless ``--no-worker``, and ``chatmem worker``), so starting the runtime starts
the worker and stopping it stops the worker. ``GET /api/admin/jobs`` lists jobs (failed ones keep
their ``last_error``) for operators.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from ..auth.deps import current_admin, get_runtime
from ..auth.models import Principal
from ..contracts.base import Output
from ..contracts.errors import AUTHED, errors
from ..runtime import Runtime
from .worker import Worker, list_recent

router = APIRouter(prefix="/api/admin/jobs", tags=["jobs"], responses=errors(*AUTHED))
WORKER_KEY = "jobs.worker"


class JobOut(Output):
    id: str
    kind: str
    payload: dict[str, Any]
    dedupe_key: str | None
    status: Literal["queued", "running", "done", "failed"]
    run_after: int
    attempts: int
    max_attempts: int
    locked_by: str
    locked_until: int | None
    last_error: str
    created_at: int
    updated_at: int


class JobPage(Output):
    items: list[JobOut]
    next_cursor: str | None = None


def install(rt: Runtime) -> None:
    if rt.settings.run_worker and WORKER_KEY not in rt.extras:
        worker = Worker(rt)
        rt.extras[WORKER_KEY] = worker
        rt.services.append(worker)


@router.get("", response_model=JobPage)
async def list_jobs(
    status: Literal["queued", "running", "done", "failed"] | None = None,
    kind: str | None = Query(None, max_length=100),
    limit: int = Query(50, ge=1, le=500),
    _p: Principal = Depends(current_admin),
    rt: Runtime = Depends(get_runtime),
):
    return await list_recent(rt.db, status=status, kind=kind, limit=limit)

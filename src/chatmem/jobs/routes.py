"""The jobs routes: ``GET /api/admin/jobs`` lists jobs (failed ones keep their ``last_error``)
for operators; ``POST /api/admin/jobs/{id}/retry`` queues a failed one again. (The in-process
``Worker`` is started by the composition root, ``app.py``.)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from ..auth.deps import CurrentAdmin, RuntimeDep
from ..contracts.base import Output
from ..contracts.errors import AUTHED, errors
from .worker import list_recent, retry_failed

router = APIRouter(prefix="/api/admin/jobs", tags=["jobs"], responses=errors(*AUTHED))


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


@router.get("", response_model=JobPage)
async def list_jobs(
    _p: CurrentAdmin,
    rt: RuntimeDep,
    status: Literal["queued", "running", "done", "failed"] | None = None,
    kind: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
):
    return await list_recent(rt.db, status=status, kind=kind, limit=limit)


@router.post("/{job_id}/retry", response_model=JobOut, responses=errors(404, 409))
async def retry_job(job_id: str, _p: CurrentAdmin, rt: RuntimeDep):
    """Queue a failed job again, due now, its attempts starting over (409 unless it failed)."""
    return await retry_failed(rt.db, job_id)

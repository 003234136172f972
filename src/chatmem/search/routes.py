"""Search route: ``GET /api/search?q=``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..runtime import Runtime
from . import service

router = APIRouter(tags=["search"])


@router.get("/api/search")
async def search(
    q: str = Query("", max_length=200),
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await service.search(rt.db, p, q)

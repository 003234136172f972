"""Search route: ``GET /api/search?q=``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..contracts.errors import AUTHED, errors
from ..runtime import Runtime
from . import service
from .wire import SearchResults

router = APIRouter(tags=["search"], responses=errors(*AUTHED))


@router.get("/api/search", response_model=SearchResults)
async def search(
    q: str = Query("", max_length=200),
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await service.search(rt.db, p, q)

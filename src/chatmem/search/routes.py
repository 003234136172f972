"""Search route: ``GET /api/search?q=``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from . import service
from .wire import SearchResults

router = APIRouter(tags=["search"], responses=errors(*AUTHED))


@router.get("/api/search", response_model=SearchResults, responses=errors(404))
async def search(
    p: CurrentUser,
    rt: RuntimeDep,
    q: Annotated[
        str,
        Query(
            min_length=2,
            max_length=200,
            # no NUL: the edge refuses one in any URL
            pattern=r"^\s*[^\s\u0000][^\u0000]*[^\s\u0000]\s*$",
            description="at least 2 characters besides surrounding spaces",
        ),
    ],
    workspace_id: Annotated[
        str, Query(max_length=64, description="search this workspace ('' = personal space)")
    ] = "",
):
    return await service.search(
        rt.db, p, q, config=rt.settings.search_config, workspace_id=workspace_id
    )

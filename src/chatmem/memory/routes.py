"""Native HTTP routes for a user's long-term memories (``/api/me/memories``): auth, one call, JSON.

(Memory's turn-loop hooks and its job handler are wired by the composition root, ``app.py``.)
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from . import service
from .wire import MemoryHistory, MemoryIn, MemoryOut, MemoryPage, MemoryPatch, StatusList

router = APIRouter(prefix="/api/me/memories", tags=["memories"], responses=errors(*AUTHED))


@router.get("", response_model=MemoryPage)
async def list_(
    p: CurrentUser,
    rt: RuntimeDep,
    status: Annotated[
        list[StatusList] | None,
        Query(description="repeat or comma-separate (no spaces)"),
    ] = None,
    type: Annotated[str | None, Query(max_length=80)] = None,
    agent_id: Annotated[
        str | None, Query(max_length=64, description="an agent id, or 'none'")
    ] = None,
    slot: Annotated[str | None, Query(max_length=64)] = None,
    q: Annotated[str | None, Query(max_length=200)] = None,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
):
    statuses = [s.strip() for v in status or [] for s in v.split(",") if s.strip()] or None
    return await service.list_memories(
        rt.db,
        p,
        status=statuses,
        memory_type=type,
        agent_id=agent_id,
        slot=slot,
        q=q,
        cursor=cursor,
        limit=limit,
    )


@router.post("", status_code=201, response_model=MemoryOut, responses=errors(404, 409))
async def create(body: MemoryIn, p: CurrentUser, rt: RuntimeDep):
    return await service.create_memory(rt.db, rt.settings, p, body)


@router.get("/{mid}", response_model=MemoryOut, responses=errors(404))
async def get(mid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.get_memory(rt.db, p, mid)


@router.patch("/{mid}", response_model=MemoryOut, responses=errors(404))
async def patch(
    mid: str,
    body: MemoryPatch,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return await service.update_memory(rt.db, p, mid, body.model_dump(exclude_unset=True))


@router.delete("/{mid}", status_code=204, responses=errors(404))
async def delete(
    mid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    purge: bool = False,
):
    if purge:
        await service.purge_memory(rt.db, p, mid)
    else:
        await service.delete_memory(rt.db, p, mid)
    return Response(status_code=204)


@router.get("/{mid}/history", response_model=MemoryHistory, responses=errors(404))
async def history(mid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.history(rt.db, p, mid)

"""Native HTTP routes for a user's long-term memories (``/api/me/memories``): auth, one call, JSON.

``install(rt)`` also registers the turn-loop hooks (context source, before-turn commands) and, by
importing ``hooks``, the ``memory.extract`` job handler.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Response

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..contracts.errors import AUTHED, errors
from ..runtime import Runtime
from . import hooks, service
from .wire import MemoryHistory, MemoryIn, MemoryOut, MemoryPage, MemoryPatch

router = APIRouter(prefix="/api/me/memories", tags=["memories"], responses=errors(*AUTHED))


def install(rt: Runtime) -> None:
    hooks.install(rt)


@router.get("", response_model=MemoryPage)
async def list_(
    status: list[str] | None = Query(None, description="repeat or comma-separate"),
    type: str | None = Query(None, max_length=80),
    agent_id: str | None = Query(None, max_length=64, description="an agent id, or 'none'"),
    slot: str | None = Query(None, max_length=64),
    q: str | None = Query(None, max_length=200),
    cursor: str | None = Query(None, max_length=500),
    limit: int = Query(50, ge=1, le=200),
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
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
async def create(
    body: MemoryIn, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await service.create_memory(rt.db, rt.settings, p, body)


@router.get("/{mid}", response_model=MemoryOut, responses=errors(404))
async def get(mid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)):
    return await service.get_memory(rt.db, p, mid)


@router.patch("/{mid}", response_model=MemoryOut, responses=errors(404))
async def patch(
    mid: str,
    body: MemoryPatch,
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await service.update_memory(rt.db, p, mid, body.model_dump(exclude_unset=True))


@router.delete("/{mid}", status_code=204, responses=errors(404))
async def delete(
    mid: str,
    purge: bool = False,
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    if purge:
        await service.purge_memory(rt.db, p, mid)
    else:
        await service.delete_memory(rt.db, p, mid)
    return Response(status_code=204)


@router.get("/{mid}/history", response_model=MemoryHistory, responses=errors(404))
async def history(
    mid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await service.history(rt.db, p, mid)

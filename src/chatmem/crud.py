"""A router factory for plain owner-scoped CRUD resources (projects, agents).

Each resource supplies a service module with ``list_``, ``create``, ``get``, ``patch`` and
``remove`` taking ``(db, principal, ...)``; the routes stay thin and identical in shape.
(No ``from __future__ import annotations`` here: FastAPI must see the real body types.)
"""

from types import ModuleType

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel

from .auth.deps import current_user, get_runtime
from .auth.models import Principal
from .runtime import Runtime


def crud_router(
    prefix: str,
    tag: str,
    svc: ModuleType,
    create_model: type[BaseModel],
    patch_model: type[BaseModel],
) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=[tag])

    @router.get("")
    async def list_(p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)):
        return await svc.list_(rt.db, p)

    @router.post("", status_code=201)
    async def create(
        body: create_model,
        p: Principal = Depends(current_user),  # type: ignore[valid-type]
        rt: Runtime = Depends(get_runtime),
    ):
        return await svc.create(rt.db, p, body)

    @router.get("/{obj_id}")
    async def get(
        obj_id: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
    ):
        return await svc.get(rt.db, p, obj_id)

    @router.patch("/{obj_id}")
    async def patch(
        obj_id: str,
        body: patch_model,  # type: ignore[valid-type]
        p: Principal = Depends(current_user),
        rt: Runtime = Depends(get_runtime),
    ):
        return await svc.patch(rt.db, p, obj_id, body)

    @router.delete("/{obj_id}", status_code=204)
    async def delete(
        obj_id: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
    ):
        await svc.remove(rt.db, p, obj_id)
        return Response(status_code=204)

    return router

"""A router factory for plain owner-scoped CRUD resources (projects, agents).

Each resource supplies a service module with ``list_``, ``create``, ``get``, ``patch`` and
``remove`` taking ``(db, principal, ...)``; the routes stay thin and identical in shape.
(No ``from __future__ import annotations`` here: FastAPI must see the real body types.)
"""

from types import ModuleType

from fastapi import APIRouter, Response
from pydantic import BaseModel, create_model

from .auth.deps import CurrentUser, RuntimeDep
from .contracts.base import Page
from .contracts.errors import AUTHED, errors


def create_model_page(item: type[BaseModel]) -> type[BaseModel]:
    """``{"items": [item], "next_cursor": null}`` named after the item (ProjectOut → ProjectPage)."""
    name = item.__name__.removesuffix("Out") + "Page"
    return create_model(name, __base__=Page[item])  # type: ignore[valid-type]


def crud_router(
    prefix: str,
    tag: str,
    svc: ModuleType,
    create_model: type[BaseModel],
    patch_model: type[BaseModel],
    out_model: type[BaseModel],
) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=[tag], responses=errors(*AUTHED))
    page_model = create_model_page(out_model)

    @router.get("", response_model=page_model)
    async def list_(p: CurrentUser, rt: RuntimeDep):
        return await svc.list_(rt.db, p)

    @router.post("", status_code=201, response_model=out_model, responses=errors(409))
    async def create(
        body: create_model,  # type: ignore[valid-type]
        p: CurrentUser,
        rt: RuntimeDep,
    ):
        return await svc.create(rt.db, p, body)

    @router.get("/{obj_id}", response_model=out_model, responses=errors(404))
    async def get(obj_id: str, p: CurrentUser, rt: RuntimeDep):
        return await svc.get(rt.db, p, obj_id)

    @router.patch("/{obj_id}", response_model=out_model, responses=errors(404, 409))
    async def patch(
        obj_id: str,
        body: patch_model,  # type: ignore[valid-type]
        p: CurrentUser,
        rt: RuntimeDep,
    ):
        return await svc.patch(rt.db, p, obj_id, body)

    @router.delete("/{obj_id}", status_code=204, responses=errors(404))
    async def delete(obj_id: str, p: CurrentUser, rt: RuntimeDep):
        await svc.remove(rt.db, p, obj_id)
        return Response(status_code=204)

    return router

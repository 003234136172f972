"""Project routes: CRUD under /api/projects; ``?workspace_id=`` lists a workspace's projects."""

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from ..crud import create_model_page
from . import service

router = APIRouter(prefix="/api/projects", tags=["projects"], responses=errors(*AUTHED))
ProjectPage = create_model_page(service.ProjectOut)


@router.get("", response_model=ProjectPage, responses=errors(404))
async def list_(
    p: CurrentUser,
    rt: RuntimeDep,
    workspace_id: Annotated[
        str, Query(max_length=64, description="a workspace's projects (default: personal)")
    ] = "",
):
    return await service.list_(rt.db, p, workspace_id)


@router.post("", status_code=201, response_model=service.ProjectOut, responses=errors(404, 409))
async def create(body: service.ProjectIn, p: CurrentUser, rt: RuntimeDep):
    return await service.create(rt.db, p, body)


@router.get("/{obj_id}", response_model=service.ProjectOut, responses=errors(404))
async def get(obj_id: str, p: CurrentUser, rt: RuntimeDep):
    return await service.get(rt.db, p, obj_id)


@router.patch("/{obj_id}", response_model=service.ProjectOut, responses=errors(404, 409))
async def patch(obj_id: str, body: service.ProjectPatch, p: CurrentUser, rt: RuntimeDep):
    return await service.patch(rt.db, p, obj_id, body)


@router.delete("/{obj_id}", status_code=204, responses=errors(404))
async def delete(obj_id: str, p: CurrentUser, rt: RuntimeDep):
    await service.remove(rt.db, p, obj_id)
    return Response(status_code=204)

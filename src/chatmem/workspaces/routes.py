"""Workspace routes: /api/workspaces (CRUD, members, invitations, transfer, shared memory) and
/api/workspace-invites (the caller's own invitations, accepting one, joining by a link)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.base import Page
from ..contracts.errors import AUTHED, errors
from ..memory.wire import (
    MemoryHistory,
    MemoryOut,
    MemoryPage,
    MemoryPatch,
    StatusList,
    WorkspaceMemoryIn,
)
from . import memory as wm
from . import service as s

router = APIRouter(tags=["workspaces"], responses=errors(*AUTHED))
B = "/api/workspaces"
MINE = "/api/workspace-invites"


class WorkspacePage(Page[s.WorkspaceOut]):
    pass


class MemberPage(Page[s.MemberOut]):
    pass


class InvitePage(Page[s.InviteOut]):
    pass


class MyInvitePage(Page[s.MyInviteOut]):
    pass


@router.get(B, response_model=WorkspacePage)
async def list_workspaces(p: CurrentUser, rt: RuntimeDep):
    return await s.list_(rt.db, p)


@router.post(B, status_code=201, response_model=s.WorkspaceOut)
async def create_workspace(body: s.WorkspaceIn, p: CurrentUser, rt: RuntimeDep):
    return await s.create(rt.db, p, body)


@router.get(B + "/{wid}", response_model=s.WorkspaceOut, responses=errors(404))
async def get_workspace(wid: str, p: CurrentUser, rt: RuntimeDep):
    return await s.get(rt.db, p, wid)


@router.patch(B + "/{wid}", response_model=s.WorkspaceOut, responses=errors(403, 404))
async def rename_workspace(wid: str, body: s.WorkspaceIn, p: CurrentUser, rt: RuntimeDep):
    return await s.rename(rt.db, p, wid, body)


@router.delete(B + "/{wid}", status_code=204, responses=errors(403, 404))
async def delete_workspace(wid: str, p: CurrentUser, rt: RuntimeDep):
    await s.remove(rt.db, p, wid)
    return Response(status_code=204)


@router.get(B + "/{wid}/members", response_model=MemberPage, responses=errors(404))
async def list_members(wid: str, p: CurrentUser, rt: RuntimeDep):
    return await s.members(rt.db, p, wid)


@router.patch(
    B + "/{wid}/members/{uid}", response_model=s.MemberOut, responses=errors(403, 404, 409)
)
async def set_member_role(wid: str, uid: str, body: s.RoleIn, p: CurrentUser, rt: RuntimeDep):
    return await s.set_role(rt.db, p, wid, uid, body)


@router.delete(B + "/{wid}/members/{uid}", status_code=204, responses=errors(403, 404, 409))
async def remove_member(wid: str, uid: str, p: CurrentUser, rt: RuntimeDep):
    """Remove a member; your own id = leave the workspace."""
    await s.remove_member(rt.db, p, wid, uid)
    return Response(status_code=204)


@router.post(B + "/{wid}/transfer", response_model=s.WorkspaceOut, responses=errors(403, 404, 409))
async def transfer_ownership(wid: str, body: s.TransferIn, p: CurrentUser, rt: RuntimeDep):
    return await s.transfer(rt.db, p, wid, body)


@router.post(
    B + "/{wid}/invites", status_code=201, response_model=s.InviteOut, responses=errors(403, 404)
)
async def create_invite(wid: str, body: s.InviteIn, p: CurrentUser, rt: RuntimeDep):
    return await s.invite(rt.db, p, wid, body)


@router.get(B + "/{wid}/invites", response_model=InvitePage, responses=errors(403, 404))
async def list_invites(wid: str, p: CurrentUser, rt: RuntimeDep):
    return await s.invites(rt.db, p, wid)


@router.delete(B + "/{wid}/invites/{iid}", status_code=204, responses=errors(403, 404))
async def revoke_invite(wid: str, iid: str, p: CurrentUser, rt: RuntimeDep):
    await s.revoke_invite(rt.db, p, wid, iid)
    return Response(status_code=204)


@router.get(MINE, response_model=MyInvitePage)
async def my_invites(p: CurrentUser, rt: RuntimeDep):
    """Pending invitations to the caller's email address."""
    return await s.my_invites(rt.db, p)


@router.post(MINE + "/join", response_model=s.WorkspaceOut, responses=errors(404, 409))
async def join_by_link(body: s.JoinIn, p: CurrentUser, rt: RuntimeDep):
    """Join with an invite link's token (consumed: a link admits one person)."""
    return await s.join(rt.db, p, body)


@router.post(MINE + "/{iid}/accept", response_model=s.WorkspaceOut, responses=errors(404, 409))
async def accept_invite(iid: str, p: CurrentUser, rt: RuntimeDep):
    return await s.accept(rt.db, p, iid)


@router.delete(MINE + "/{iid}", status_code=204, responses=errors(404))
async def decline_invite(iid: str, p: CurrentUser, rt: RuntimeDep):
    await s.decline(rt.db, p, iid)
    return Response(status_code=204)


# ── shared memory: members read, owners/admins manage ──────────────────────────────────────────


@router.get(B + "/{wid}/memories", response_model=MemoryPage, responses=errors(404))
async def list_workspace_memories(
    wid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    status: Annotated[
        list[StatusList] | None, Query(description="repeat or comma-separate (no spaces)")
    ] = None,
    q: Annotated[str | None, Query(max_length=200)] = None,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
):
    statuses = [x.strip() for v in status or [] for x in v.split(",") if x.strip()] or None
    return await wm.list_(rt.db, p, wid, status=statuses, q=q, cursor=cursor, limit=limit)


@router.post(
    B + "/{wid}/memories",
    status_code=201,
    response_model=MemoryOut,
    responses=errors(403, 404, 409),
)
async def create_workspace_memory(
    wid: str, body: WorkspaceMemoryIn, p: CurrentUser, rt: RuntimeDep
):
    return await wm.create(rt.db, rt.settings, p, wid, body)


@router.get(B + "/{wid}/memories/{mid}", response_model=MemoryOut, responses=errors(404))
async def get_workspace_memory(wid: str, mid: str, p: CurrentUser, rt: RuntimeDep):
    return await wm.get(rt.db, p, wid, mid)


@router.patch(B + "/{wid}/memories/{mid}", response_model=MemoryOut, responses=errors(403, 404))
async def patch_workspace_memory(
    wid: str, mid: str, body: MemoryPatch, p: CurrentUser, rt: RuntimeDep
):
    return await wm.update(rt.db, p, wid, mid, body.model_dump(exclude_unset=True))


@router.delete(B + "/{wid}/memories/{mid}", status_code=204, responses=errors(403, 404))
async def delete_workspace_memory(
    wid: str, mid: str, p: CurrentUser, rt: RuntimeDep, purge: bool = False
):
    await wm.remove(rt.db, p, wid, mid, purge=purge)
    return Response(status_code=204)


@router.get(
    B + "/{wid}/memories/{mid}/history", response_model=MemoryHistory, responses=errors(404)
)
async def workspace_memory_history(wid: str, mid: str, p: CurrentUser, rt: RuntimeDep):
    return await wm.history(rt.db, p, wid, mid)

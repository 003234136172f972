"""Workspace use-cases: CRUD, members and roles, invitations, leave / remove / transfer.

Roles (decisions where issue 16 is silent, also in docs/workspaces.md):

- ``owner`` (exactly one, ``workspaces.owner_id``): everything, including deleting the workspace,
  changing roles and transferring ownership; cannot leave (transfer first, or delete).
- ``admin``: renames the workspace, invites, revokes invitations, removes plain members, sees and
  manages every row of the workspace (private ones included) and its shared memory.
- ``member``: sees the workspace, its members and its public rows; may leave.

A non-member gets 404 for everything about a workspace; a member lacking the role gets 403.
Invitations last 7 days and are consumed on use: an email invitation is accepted by the signed-in
user with that email, a link invitation by whoever holds its token (shown once, at creation).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Literal

from pydantic import Field

from ..auth.models import Principal
from ..contracts.base import Email, Input, Name, Output
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..errors import Conflict, Forbidden, NotFound
from . import store

RANK = {"member": 0, "admin": 1, "owner": 2}
INVITE_TTL_MS = 7 * 24 * 3600 * 1000


class WorkspaceIn(Input):
    name: Name


class WorkspaceOut(Output):
    id: str
    name: str
    owner_id: str
    role: Literal["owner", "admin", "member"] = Field(description="the caller's role")
    member_count: int
    created_at: int
    updated_at: int


class MemberOut(Output):
    user_id: str
    email: str
    name: str
    role: Literal["owner", "admin", "member"]
    created_at: int


class RoleIn(Input):
    role: Literal["admin", "member"]


class TransferIn(Input):
    user_id: str = Field(min_length=1, max_length=200)


class InviteIn(Input):
    email: Email | None = Field(
        default=None, description="invite this address; omit for a one-time invite link"
    )
    role: Literal["admin", "member"] = "member"


class InviteOut(Output):
    id: str
    workspace_id: str
    email: str
    role: str
    created_at: int
    expires_at: int
    token: str | None = Field(
        default=None, description="the link's secret: only in the answer that created it"
    )


class MyInviteOut(Output):
    id: str
    workspace_id: str
    workspace_name: str
    role: str
    expires_at: int


class JoinIn(Input):
    token: str = Field(min_length=1, max_length=200)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _ws_out(row, count: int) -> dict:
    m = dict(row._mapping)
    return {**m, "member_count": count}


def _need(role: str, at_least: str) -> None:
    if RANK[role] < RANK[at_least]:
        raise Forbidden(f"only a workspace {at_least} may do this", code="workspace_role")


async def _out(c, p: Principal, wid: str) -> dict:
    row = await store.get_for_member(c, p.id, wid)
    return _ws_out(row, (await store.member_counts(c, [wid])).get(wid, 0))


async def create(db: Database, p: Principal, body: WorkspaceIn) -> dict:
    now, wid = now_ms(), new_id("ws")
    async with db.write() as c:
        await store.insert_workspace(
            c, id=wid, name=body.name, owner_id=p.id, created_at=now, updated_at=now
        )
        await store.add_member(c, wid, p.id, "owner", now)
        return await _out(c, p, wid)


async def list_(db: Database, p: Principal) -> dict:
    async with db.read() as c:
        rows = await store.list_for_member(c, p.id)
        counts = await store.member_counts(c, [r.id for r in rows])
    return {"items": [_ws_out(r, counts.get(r.id, 0)) for r in rows], "next_cursor": None}


async def get(db: Database, p: Principal, wid: str) -> dict:
    async with db.read() as c:
        return await _out(c, p, wid)


async def rename(db: Database, p: Principal, wid: str, body: WorkspaceIn) -> dict:
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "admin")
        await store.update_workspace(c, wid, name=body.name, updated_at=now_ms())
        return await _out(c, p, wid)


async def remove(db: Database, p: Principal, wid: str) -> None:
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "owner")
        await store.delete_workspace(c, wid)


async def members(db: Database, p: Principal, wid: str) -> dict:
    async with db.read() as c:
        await store.get_for_member(c, p.id, wid)
        rows = await store.members(c, wid)
    return {"items": [dict(r._mapping) for r in rows], "next_cursor": None}


async def _target(c, wid: str, uid: str) -> str:
    role = await store.role_of(c, wid, uid)
    if role is None:
        raise NotFound("member not found")
    return role


async def set_role(db: Database, p: Principal, wid: str, uid: str, body: RoleIn) -> dict:
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "owner")
        if await _target(c, wid, uid) == "owner":
            raise Conflict("the owner's role changes only by a transfer", code="owner_role")
        await store.set_role(c, wid, uid, body.role)
        rows = await store.members(c, wid)
    return next(dict(r._mapping) for r in rows if r.user_id == uid)


async def remove_member(db: Database, p: Principal, wid: str, uid: str) -> None:
    """Remove a member, or leave when ``uid`` is the caller. The owner cannot leave (transfer
    ownership or delete the workspace); an admin removes plain members, the owner anyone.
    The member's rows stay in the workspace (they belong to the team)."""
    async with db.write() as c:
        mine = (await store.get_for_member(c, p.id, wid)).role
        theirs = await _target(c, wid, uid)
        if theirs == "owner":
            raise Conflict(
                "the owner cannot leave: transfer ownership or delete the workspace",
                code="owner_cannot_leave",
            )
        if uid != p.id and RANK[mine] <= RANK[theirs]:
            _need(mine, "owner" if theirs == "admin" else "admin")
        await store.remove_member(c, wid, uid)


async def transfer(db: Database, p: Principal, wid: str, body: TransferIn) -> dict:
    """Make another member the owner; the old owner stays on as an admin."""
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "owner")
        if body.user_id == p.id:
            raise Conflict("you already own this workspace", code="already_owner")
        await _target(c, wid, body.user_id)
        await store.set_role(c, wid, body.user_id, "owner")
        await store.set_role(c, wid, p.id, "admin")
        await store.update_workspace(c, wid, owner_id=body.user_id, updated_at=now_ms())
        return await _out(c, p, wid)


async def invite(db: Database, p: Principal, wid: str, body: InviteIn) -> dict:
    token, now = secrets.token_urlsafe(24), now_ms()
    values = dict(
        id=new_id("wsi"),
        workspace_id=wid,
        email=(body.email or "").lower(),
        role=body.role,
        token_hash=_hash(token),
        created_by=p.id,
        created_at=now,
        expires_at=now + INVITE_TTL_MS,
    )
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "admin")
        await store.insert_invite(c, **values)
    out = {k: v for k, v in values.items() if k not in ("token_hash", "created_by")}
    return {**out, "token": token}


async def invites(db: Database, p: Principal, wid: str) -> dict:
    async with db.read() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "admin")
        rows = await store.invites_of(c, wid, now_ms())
    return {"items": [dict(r._mapping) for r in rows], "next_cursor": None}


async def revoke_invite(db: Database, p: Principal, wid: str, iid: str) -> None:
    async with db.write() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, "admin")
        await store.invite_in(c, wid, iid)
        await store.delete_invite(c, iid)


async def my_invites(db: Database, p: Principal) -> dict:
    async with db.read() as c:
        rows = await store.invites_for_email(c, p.email.lower(), now_ms())
    return {"items": [dict(r._mapping) for r in rows], "next_cursor": None}


async def _consume(c, p: Principal, inv) -> dict:
    if await store.role_of(c, inv.workspace_id, p.id) is not None:
        raise Conflict("you are already a member of this workspace", code="already_member")
    if not await store.delete_invite(c, inv.id):
        raise NotFound("invitation not found")
    await store.add_member(c, inv.workspace_id, p.id, inv.role, now_ms())
    return await _out(c, p, inv.workspace_id)


async def accept(db: Database, p: Principal, iid: str) -> dict:
    async with db.write() as c:
        inv = await store.invite_for_email(c, iid, p.email.lower(), now_ms())
        return await _consume(c, p, inv)


async def decline(db: Database, p: Principal, iid: str) -> None:
    async with db.write() as c:
        inv = await store.invite_for_email(c, iid, p.email.lower(), now_ms())
        await store.delete_invite(c, inv.id)


async def join(db: Database, p: Principal, body: JoinIn) -> dict:
    async with db.write() as c:
        inv = await store.invite_by_token(c, _hash(body.token), now_ms())
        if inv.email and inv.email != p.email.lower():
            raise NotFound("invitation not found")
        return await _consume(c, p, inv)

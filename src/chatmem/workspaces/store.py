"""Every SQL statement of the workspaces domain: workspaces, members, invitations, and the
membership test other domains use to scope workspace rows.

Why it exists: workspaces/service.py decides who may do what (roles); this module reads and writes
on an open connection. A workspace the caller is not a member of is looked up with the member in
the query, so it is None → 404, exactly like another user's row.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, delete, exists, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.engine import reuse_key_check_plans
from ..errors import found

W = t.workspaces.c
WM = t.workspace_members.c
WI = t.workspace_invites.c
U = t.users.c
MANAGERS = ("owner", "admin")


def visible(cols, user_id: str | ColumnElement[str]) -> ColumnElement[bool]:
    """The rows of ``cols`` (projects or conversations) the user may see, as seed 001 states:
    a personal row (``workspace_id`` '') is its creator's; a workspace row is seen by members of
    that workspace when ``is_public`` = 1, else only by its creator and the workspace's
    owner/admins. A creator who left the workspace no longer sees its rows."""
    member = exists().where(
        WM.workspace_id == cols.workspace_id,
        WM.user_id == user_id,
        or_(cols.is_public == 1, cols.user_id == user_id, WM.role.in_(MANAGERS)),
    )
    return or_(
        and_(cols.workspace_id == "", cols.user_id == user_id),
        and_(cols.workspace_id != "", member),
    )


def in_workspace(cols, wid: str, user_id: str) -> ColumnElement[bool]:
    """``visible`` rows of one workspace (a workspace listing)."""
    return and_(cols.workspace_id == wid, visible(cols, user_id))


async def is_manager(c: AsyncConnection, wid: str, user_id: str) -> bool:
    return await role_of(c, wid, user_id) in MANAGERS


async def may_act_on(c: AsyncConnection, user_id: str, conv, message) -> bool:
    """Whether the user may edit, delete or stop ``message`` of a conversation they see: in a
    workspace conversation only its author (who spoke, or asked for the answer) and the
    workspace's owner/admins; in a personal one its owner."""
    if not conv.workspace_id or message.author_id in ("", user_id):
        return True
    return await is_manager(c, conv.workspace_id, user_id)


async def may_manage(c: AsyncConnection, user_id: str, row) -> bool:
    """Whether the user may change or delete ``row`` (a visible project or conversation):
    personal rows and one's own workspace rows yes; others' workspace rows only as owner/admin."""
    if not row.workspace_id or row.user_id == user_id:
        return True
    return await role_of(c, row.workspace_id, user_id) in MANAGERS


def _mine(user_id: str):
    return (
        select(t.workspaces, WM.role)
        .join(t.workspace_members, and_(WM.workspace_id == W.id, WM.user_id == user_id))
        .order_by(W.name, W.id)
    )


async def get_for_member(c: AsyncConnection, user_id: str, wid: str):
    """The workspace with the caller's ``role``; 404 unless the caller is a member."""
    row = (await c.execute(_mine(user_id).where(W.id == wid))).first()
    return found(row, "workspace not found")


async def list_for_member(c: AsyncConnection, user_id: str) -> list:
    return list((await c.execute(_mine(user_id))).all())


async def role_of(c: AsyncConnection, wid: str, user_id: str) -> str | None:
    q = select(WM.role).where(WM.workspace_id == wid, WM.user_id == user_id)
    return (await c.execute(q)).scalar()


async def insert_workspace(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.workspaces).values(**values))


async def update_workspace(c: AsyncConnection, wid: str, **values) -> None:
    await c.execute(update(t.workspaces).where(W.id == wid).values(**values))


async def delete_workspace(c: AsyncConnection, wid: str) -> None:
    """The workspace and its rows: ``workspace_id`` is a soft reference (no FK), so its
    conversations, projects and shared memories are deleted here; each cascades as the seed says (messages,
    shares, leases and ratings with the conversation; problem reports keep a NULL conversation
    and their title snapshot). Members and invitations go by their FK's CASCADE."""
    C, P, M = t.conversations.c, t.projects.c, t.memories.c
    async with reuse_key_check_plans(c):  # the cascades, per message and per memory
        await c.execute(delete(t.conversations).where(C.workspace_id == wid))
        await c.execute(delete(t.projects).where(P.workspace_id == wid))
        await c.execute(delete(t.memories).where(M.workspace_id == wid))  # events by CASCADE
        await c.execute(delete(t.workspaces).where(W.id == wid))


async def hand_over_owned(c: AsyncConnection, user_id: str, now: int) -> list[str]:
    """Before an owner's account goes (``workspaces.owner_id`` cascades): each workspace they own
    passes to its longest-standing admin, else its longest-standing member, who becomes the
    owner — the team keeps its work. Returns the workspaces nobody else is in; the caller deletes
    those with their rows (``delete_workspace``: rows of members who left have no other owner)."""
    alone = []
    for wid in (await c.execute(select(W.id).where(W.owner_id == user_id))).scalars().all():
        heir = (
            await c.execute(
                select(WM.user_id)
                .where(WM.workspace_id == wid, WM.user_id != user_id)
                .order_by((WM.role == "admin").desc(), WM.created_at, WM.user_id)
                .limit(1)
            )
        ).scalar()
        if heir is None:
            alone.append(wid)
            continue
        await update_workspace(c, wid, owner_id=heir, updated_at=now)
        await set_role(c, wid, heir, "owner")
    return alone


async def members(c: AsyncConnection, wid: str) -> list:
    q = (
        select(WM.user_id, WM.role, WM.created_at, U.email, U.name)
        .join(t.users, U.id == WM.user_id)
        .where(WM.workspace_id == wid)
        .order_by(WM.created_at, WM.user_id)
    )
    return list((await c.execute(q)).all())


async def add_member(c: AsyncConnection, wid: str, user_id: str, role: str, now: int) -> None:
    await c.execute(
        insert(t.workspace_members).values(
            workspace_id=wid, user_id=user_id, role=role, created_at=now
        )
    )


async def set_role(c: AsyncConnection, wid: str, user_id: str, role: str) -> None:
    await c.execute(
        update(t.workspace_members)
        .where(WM.workspace_id == wid, WM.user_id == user_id)
        .values(role=role)
    )


async def remove_member(c: AsyncConnection, wid: str, user_id: str) -> None:
    await c.execute(
        delete(t.workspace_members).where(WM.workspace_id == wid, WM.user_id == user_id)
    )


async def insert_invite(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.workspace_invites).values(**values))


async def invites_of(c: AsyncConnection, wid: str, now: int) -> list:
    q = (
        select(t.workspace_invites)
        .where(WI.workspace_id == wid, WI.expires_at > now)
        .order_by(WI.created_at.desc(), WI.id.desc())
    )
    return list((await c.execute(q)).all())


def _with_workspace():
    return select(t.workspace_invites, W.name.label("workspace_name")).join(
        t.workspaces, W.id == WI.workspace_id
    )


async def invites_for_email(c: AsyncConnection, email: str, now: int) -> list:
    q = (
        _with_workspace()
        .where(WI.email == email, WI.email != "", WI.expires_at > now)
        .order_by(WI.created_at.desc(), WI.id.desc())
    )
    return list((await c.execute(q)).all())


async def invite_for_email(c: AsyncConnection, iid: str, email: str, now: int):
    q = _with_workspace().where(
        WI.id == iid, WI.email == email, WI.email != "", WI.expires_at > now
    )
    return found((await c.execute(q)).first(), "invitation not found")


async def invite_by_token(c: AsyncConnection, token_hash: str, now: int):
    q = _with_workspace().where(WI.token_hash == token_hash, WI.expires_at > now)
    return found((await c.execute(q)).first(), "invitation not found")


async def invite_in(c: AsyncConnection, wid: str, iid: str):
    q = select(t.workspace_invites).where(WI.id == iid, WI.workspace_id == wid)
    return found((await c.execute(q)).first(), "invitation not found")


async def delete_invite(c: AsyncConnection, iid: str) -> bool:
    """Consume (or revoke) an invitation; False when another request consumed it first."""
    res = await c.execute(delete(t.workspace_invites).where(WI.id == iid))
    return (res.rowcount or 0) > 0


async def member_counts(c: AsyncConnection, wids: list[str]) -> dict[str, int]:
    if not wids:
        return {}
    q = (
        select(WM.workspace_id, func.count())
        .where(WM.workspace_id.in_(wids))
        .group_by(WM.workspace_id)
    )
    return {r.workspace_id: r[1] for r in (await c.execute(q)).all()}

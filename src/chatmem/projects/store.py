"""Every SQL statement of the projects domain.

Why it exists: projects/service.py decides (flags, duplicate names as 409); this module reads and
writes on an open connection, scoped to the owner. Context assembly reads a conversation's project
instructions through ``instructions``.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.dialect import unindexed
from ..errors import found
from ..workspaces.store import in_workspace, visible

P = t.projects.c


async def get_owned(c: AsyncConnection, user_id: str, pid: str):
    """The project if the user may see it (their own personal one, or a workspace one as
    workspaces/store.visible says); NotFound otherwise."""
    q = select(t.projects).where(P.id == pid, visible(P, user_id))
    return found((await c.execute(q)).first(), "project not found")


async def instructions(c: AsyncConnection, conv) -> str:
    """The instructions of the conversation's project for its context ('' when none or gone):
    a personal conversation's own project, a workspace conversation's project in that
    workspace (whichever member created it)."""
    if not conv.project_id:
        return ""
    q = select(P.instructions).where(P.id == conv.project_id, P.workspace_id == conv.workspace_id)
    if not conv.workspace_id:
        q = q.where(P.user_id == conv.user_id)
    return (await c.execute(q)).scalar() or ""


async def insert_project(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.projects).values(**values))


async def list_personal(c: AsyncConnection, user_id: str, workspace_id: str = "") -> list:
    """The user's personal projects, or with ``workspace_id`` the workspace's projects the user
    may see (the caller checked membership)."""
    if workspace_id:
        where = in_workspace(P, workspace_id, user_id)
    else:
        where = (P.user_id == user_id) & (unindexed(P.workspace_id) == "")
    q = select(t.projects).where(where).order_by(P.pinned.desc(), P.updated_at.desc(), P.id.desc())
    return list((await c.execute(q)).all())


async def update_project(c: AsyncConnection, pid: str, **values) -> None:
    await c.execute(update(t.projects).where(P.id == pid).values(**values))


async def delete_project(c: AsyncConnection, pid: str) -> None:
    await c.execute(delete(t.projects).where(P.id == pid))

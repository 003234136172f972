"""Every SQL statement of the projects domain.

Why it exists: projects/service.py decides (flags, duplicate names as 409); this module reads and
writes on an open connection, scoped to the owner. Context assembly reads a conversation's project
instructions through ``instructions``.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..errors import found

P = t.projects.c


async def get_owned(c: AsyncConnection, user_id: str, pid: str):
    q = select(t.projects).where(P.id == pid, P.user_id == user_id)
    return found((await c.execute(q)).first(), "project not found")


async def instructions(c: AsyncConnection, user_id: str, pid: str) -> str:
    """The project's instructions for its conversations' context ('' when none or gone)."""
    q = select(P.instructions).where(P.id == pid, P.user_id == user_id)
    return (await c.execute(q)).scalar() or ""


async def insert_project(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.projects).values(**values))


async def list_personal(c: AsyncConnection, user_id: str) -> list:
    q = (
        select(t.projects)
        .where(P.user_id == user_id, P.workspace_id == "")
        .order_by(P.pinned.desc(), P.updated_at.desc(), P.id.desc())
    )
    return list((await c.execute(q)).all())


async def update_project(c: AsyncConnection, pid: str, **values) -> None:
    await c.execute(update(t.projects).where(P.id == pid).values(**values))


async def delete_project(c: AsyncConnection, pid: str) -> None:
    await c.execute(delete(t.projects).where(P.id == pid))

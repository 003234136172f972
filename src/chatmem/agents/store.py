"""Every SQL statement of the agents domain (seed 000's companion personas, table ``agents``).

Why it exists: agents/service.py decides (validation, ordering rules, cascades); this module reads
and writes, each function on an open connection, scoped to the owner where a caller can name an
id. Context assembly reads a conversation's persona through ``persona``.
"""

from __future__ import annotations

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.engine import reuse_key_check_plans
from ..errors import found

A = t.agents.c
C = t.conversations.c


async def get_owned(c: AsyncConnection, user_id: str, agent_id: str):
    q = select(t.agents).where(A.id == agent_id, A.user_id == user_id)
    return found((await c.execute(q)).first(), "agent not found")


async def persona(c: AsyncConnection, agent_id: str):
    """The agent row a conversation points at (its owner's: the conversation is scoped already);
    None when it is gone."""
    return (await c.execute(select(t.agents).where(A.id == agent_id))).first()


async def insert_agent(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.agents).values(**values))


async def list_by_last_message(c: AsyncConnection, user_id: str) -> list:
    """The user's agents, the one with the most recent conversation message first."""
    last = (
        select(C.agent_id, func.max(C.last_message_at).label("last_message_at"))
        .where(C.user_id == user_id, C.agent_id.is_not(None))
        .group_by(C.agent_id)
        .subquery()
    )
    q = (
        select(t.agents, last.c.last_message_at)
        .select_from(t.agents.outerjoin(last, and_(last.c.agent_id == A.id)))
        .where(A.user_id == user_id)
        .order_by(
            func.coalesce(last.c.last_message_at, -1).desc(), A.updated_at.desc(), A.id.desc()
        )
    )
    return list((await c.execute(q)).all())


async def update_agent(c: AsyncConnection, agent_id: str, **values) -> None:
    await c.execute(update(t.agents).where(A.id == agent_id).values(**values))


async def record_reply(c: AsyncConnection, agent_id: str, text: str, at: int) -> None:
    """The last-assistant-message preview; a reply that finishes late never overwrites a newer
    one's."""
    await c.execute(
        update(t.agents)
        .where(
            A.id == agent_id,
            or_(A.last_assistant_message_at.is_(None), A.last_assistant_message_at <= at),
        )
        .values(last_assistant_message=text, last_assistant_message_at=at)
    )


async def conversation_ids(c: AsyncConnection, user_id: str, agent_id: str) -> list[str]:
    q = select(C.id).where(C.agent_id == agent_id, C.user_id == user_id)
    return list((await c.execute(q)).scalars().all())


async def delete_agent(c: AsyncConnection, agent_id: str) -> None:
    async with reuse_key_check_plans(c):  # its conversations' messages go by cascade
        await c.execute(delete(t.agents).where(A.id == agent_id))

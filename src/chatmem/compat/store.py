"""SQL behind the ``/rpc`` API. Every function takes an open connection and the caller's user id.

Agents are seed 000's (docs/specs.md) ``user_agent_companions`` (table ``agents``); an agent that is missing or owned
by someone else is reported as "Agent is not available" (404) — the same answer for both, so ids of
other users' agents cannot be probed. Each (user, agent) pair has one default conversation, created
race-free by an insert that does nothing on the partial unique index and a read-back.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert
from ..db.ids import new_id
from ..errors import NotFound, found
from .cursor import Cursor

A = t.agents.c
C = t.conversations.c
M = t.messages.c
F = t.message_feedback.c

PAGE_SIZE = 40
LISTED_ROLES = ("user", "assistant")
AGENT_NOT_AVAILABLE = "Agent is not available"


class AgentNotAvailable(NotFound):
    code = "agent_not_available"

    def __init__(self) -> None:
        super().__init__(AGENT_NOT_AVAILABLE)


async def owned_agent(c: AsyncConnection, user_id: str, agent_id: str):
    row = (await c.execute(select(t.agents).where(A.id == agent_id, A.user_id == user_id))).first()
    if row is None:
        raise AgentNotAvailable()
    return row


async def default_conversation(c: AsyncConnection, user_id: str, agent_id: str):
    q = select(t.conversations).where(
        C.user_id == user_id, C.agent_id == agent_id, C.is_agent_default == 1
    )
    return (await c.execute(q)).first()


def _insert_ignoring_default_conflict(c: AsyncConnection, values: dict):
    return (
        insert(c, t.conversations)
        .values(**values)
        .on_conflict_do_nothing(
            index_elements=["user_id", "agent_id"], index_where=C.is_agent_default == 1
        )
    )


async def ensure_default_conversation(c: AsyncConnection, user_id: str, agent):
    """Get-or-create the (user, agent) default conversation inside a write transaction.

    Two first requests racing both insert; the partial unique index lets exactly one row in and the
    other insert does nothing (PostgreSQL waits for the winner's commit); both then read it back.
    """
    now = now_ms()
    values = dict(
        id=new_id("c"),
        user_id=user_id,
        agent_id=agent.id,
        title=agent.name,
        is_agent_default=1,
        created_at=now,
        updated_at=now,
    )
    await c.execute(_insert_ignoring_default_conflict(c, values))
    row = await default_conversation(c, user_id, agent.id)
    assert row is not None  # the insert or the conflicting row is visible now
    return row


async def agent_conversation(c: AsyncConnection, user_id: str, agent_id: str, conv_id: str):
    """One of the caller's conversations with this agent (default or not), else NotFound."""
    q = select(t.conversations).where(C.id == conv_id, C.user_id == user_id, C.agent_id == agent_id)
    row = (await c.execute(q)).first()
    return found(row, "Conversation is not available", code="conversation_not_available")


async def chat_conversation(c: AsyncConnection, user_id: str, chat_id: str):
    """What an AI SDK chat id names: one of the caller's agent conversations by id, else the
    default conversation of the caller's agent with that id (None when it has none yet);
    NotFound for anything else."""
    q = select(t.conversations).where(
        C.id == chat_id, C.user_id == user_id, C.agent_id.is_not(None)
    )
    row = (await c.execute(q)).first()
    if row is not None:
        return row
    await owned_agent(c, user_id, chat_id)
    return await default_conversation(c, user_id, chat_id)


async def running_reply(c: AsyncConnection, conv_id: str) -> str | None:
    """The newest assistant message of the conversation still streaming, if any."""
    q = (
        select(M.id)
        .where(M.conversation_id == conv_id, M.role == "assistant", M.status == "streaming")
        .order_by(M.created_at.desc(), M.id.desc())
        .limit(1)
    )
    return (await c.execute(q)).scalar()


async def cursor_depth(c: AsyncConnection, conv_id: str, mid: str) -> int | None:
    q = select(M.depth).where(M.id == mid, M.conversation_id == conv_id)
    return (await c.execute(q)).scalar()


async def history_page(
    c: AsyncConnection, conv_id: str, cursor: Cursor | None, limit: int = PAGE_SIZE
) -> tuple[list, Any]:
    """Up to ``limit`` listed messages older than ``cursor`` in (created_at, depth, id) order,
    oldest → newest, plus the next older row (or None) so the caller can tell whether more exist
    and whether the boundary millisecond is shared. Messages still streaming are not listed."""
    q = select(t.messages).where(
        M.conversation_id == conv_id, M.status != "streaming", M.role.in_(LISTED_ROLES)
    )
    if cursor is not None:
        if cursor.id is None:
            q = q.where(M.created_at < cursor.ms)
        else:
            q = q.where(
                or_(
                    M.created_at < cursor.ms,
                    and_(M.created_at == cursor.ms, M.depth < cursor.depth),
                    and_(M.created_at == cursor.ms, M.depth == cursor.depth, M.id < cursor.id),
                )
            )
    q = q.order_by(M.created_at.desc(), M.depth.desc(), M.id.desc()).limit(limit + 1)
    rows = list((await c.execute(q)).all())
    older = rows[limit] if len(rows) > limit else None
    page = rows[:limit]
    page.reverse()
    return page, older


async def feedback_for(
    c: AsyncConnection, user_id: str, message_ids: list[str]
) -> dict[str, object]:
    if not message_ids:
        return {}
    q = select(t.message_feedback).where(F.user_id == user_id, F.message_id.in_(message_ids))
    return {r.message_id: r for r in (await c.execute(q)).all()}


async def feedback_message(c: AsyncConnection, user_id: str, agent_id: str, message_id: str):
    """The caller's completed assistant message of this agent, else NotFound."""
    q = (
        select(t.messages)
        .select_from(t.messages.join(t.conversations, C.id == M.conversation_id))
        .where(
            M.id == message_id,
            M.agent_id == agent_id,
            M.role == "assistant",
            M.status == "complete",
            C.user_id == user_id,
            C.agent_id == agent_id,
        )
    )
    msg = (await c.execute(q)).first()
    if msg is None:
        raise NotFound("Message not found", code="message_not_found")
    return msg

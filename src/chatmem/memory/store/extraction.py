"""What the memory extraction job reads and moves: the conversation, its cursor, the known rows.

Why it exists: the job (``memory/service.py``, ``hooks.py``) walks a conversation's unseen path
from ``memory_cursor``; these small reads and the cursor write are its only SQL.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ...db import schema as t
from .. import policy as pol
from .owner import MEM, MSG, Owner, owner_cond, scope_cond

# ── what the extraction job reads and moves ─────────────────────────────────────────────────────

CONV = t.conversations.c


async def owned_conversation(c: AsyncConnection, user_id: str, conversation_id: str):
    q = select(t.conversations).where(CONV.id == conversation_id, CONV.user_id == user_id)
    return (await c.execute(q)).first()


async def message_marker(c: AsyncConnection, conversation_id: str, mid: str | None):
    """(id, depth) of one message of the conversation, None when it is gone."""
    if not mid:
        return None
    q = select(MSG.id, MSG.depth).where(MSG.id == mid, MSG.conversation_id == conversation_id)
    return (await c.execute(q)).first()


async def known_for_extractor(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, limit: int = 50
) -> list:
    """The scope's live memories an extractor is shown (most important, newest first)."""
    q = (
        select(t.memories)
        .where(scope_cond(user_id, agent_id), MEM.status.in_(sorted(pol.LIVE)))
        .order_by(MEM.importance.desc(), MEM.updated_at.desc())
        .limit(limit)
    )
    return list((await c.execute(q)).all())


async def live_visible(c: AsyncConnection, user_id: Owner, agent_id: str | None) -> list:
    """The live memories a conversation sees: user-wide ones, plus its agent's when it has one
    (what "forget …" in that conversation may disable)."""
    scope = (
        MEM.agent_id.is_(None)
        if agent_id is None
        else (MEM.agent_id.is_(None)) | (MEM.agent_id == agent_id)
    )
    q = select(t.memories).where(owner_cond(user_id), scope, MEM.status.in_(sorted(pol.LIVE)))
    return list((await c.execute(q)).all())


async def agent_name(c: AsyncConnection, agent_id: str | None) -> str:
    if not agent_id:
        return ""
    q = select(t.agents.c.name).where(t.agents.c.id == agent_id)
    return (await c.execute(q)).scalar() or ""


async def memory_cursor(c: AsyncConnection, conversation_id: str) -> tuple[bool, str | None]:
    """(the conversation exists, its memory cursor)."""
    q = select(CONV.memory_cursor).where(CONV.id == conversation_id)
    row = (await c.execute(q)).first()
    return (row is not None, row.memory_cursor if row is not None else None)


async def set_memory_cursor(c: AsyncConnection, conversation_id: str, cursor: str | None) -> None:
    await c.execute(
        update(t.conversations).where(CONV.id == conversation_id).values(memory_cursor=cursor)
    )


async def user_settings(c: AsyncConnection, user_id: str) -> dict:
    """The user's settings (memory_enabled and the like); {} for an unknown user."""
    row = (await c.execute(select(t.users.c.settings).where(t.users.c.id == user_id))).first()
    return dict(row.settings or {}) if row else {}


async def owns_agent(c: AsyncConnection, user_id: str, agent_id: str) -> bool:
    q = select(t.agents.c.id).where(t.agents.c.id == agent_id, t.agents.c.user_id == user_id)
    return (await c.execute(q)).first() is not None

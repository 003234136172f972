"""SQL of the OpenAI-compatible door: the prefix fingerprints that map resent history to a
conversation (table ``v1_prefixes``)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms

V = t.v1_prefixes.c
M = t.messages.c


async def find(c: AsyncConnection, user_id: str, prefix_hash: str):
    """(conversation_id, message_id) of the user message that ended this prefix, or None."""
    q = select(V.conversation_id, V.message_id).where(
        V.user_id == user_id, V.prefix_hash == prefix_hash
    )
    return (await c.execute(q)).first()


async def record(
    c: AsyncConnection, user_id: str, prefix_hash: str, conversation_id: str, message_id: str
) -> None:
    """Remember that this prefix ends at ``message_id`` (the newest such message wins; an
    upsert, so two requests racing with the same history never collide)."""
    dialect = postgresql if c.dialect.name == "postgresql" else sqlite
    values = dict(conversation_id=conversation_id, message_id=message_id, created_at=now_ms())
    stmt = dialect.insert(t.v1_prefixes).values(user_id=user_id, prefix_hash=prefix_hash, **values)
    await c.execute(
        stmt.on_conflict_do_update(index_elements=["user_id", "prefix_hash"], set_=values)
    )


async def answer_under(c: AsyncConnection, conv_id: str, user_mid: str, text: str) -> str | None:
    """The assistant reply to continue after: the child of ``user_mid`` whose text the client
    resent, else its newest answer; None when it has none."""
    q = (
        select(M.id, M.search_text)
        .where(M.conversation_id == conv_id, M.parent_id == user_mid, M.role == "assistant")
        .order_by(M.created_at.desc(), M.id.desc())
    )
    rows = (await c.execute(q)).all()
    for r in rows:
        if (r.search_text or "") == text:
            return r.id
    return rows[0].id if rows else None

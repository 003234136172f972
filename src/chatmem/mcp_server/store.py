"""SQL of the MCP door: which conversation holds one of the caller's messages."""

from __future__ import annotations

from sqlalchemy import select

from ..db import schema as t
from ..errors import NotFound

M = t.messages.c
C = t.conversations.c


async def conversation_of(c, user_id: str, message_id: str) -> str:
    q = (
        select(M.conversation_id)
        .select_from(t.messages.join(t.conversations, C.id == M.conversation_id))
        .where(M.id == message_id, C.user_id == user_id)
    )
    cid = (await c.execute(q)).scalar()
    if cid is None:
        raise NotFound("message not found", details={"message_id": message_id})
    return cid

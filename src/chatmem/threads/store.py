"""SQL of inline threads: listing the threads anchored in a conversation.

Why it exists: statements live in stores (docs/architecture.md, "Where SQL lives"). A thread is an
ordinary conversation, so creating and reading one goes through ``conversations/store.py``; only the
listing by source (and anchor message) is the threads domain's own query.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t

C = t.conversations.c


async def inline_threads(
    c: AsyncConnection, user_id: str, cid: str, *, message_id: str | None
) -> list:
    """The user's inline threads of ``cid`` (of one anchor message when given), oldest first."""
    q = select(t.conversations).where(C.user_id == user_id, C.inline_source_conv == cid)
    if message_id:
        q = q.where(C.inline_parent_id == message_id)
    return list((await c.execute(q.order_by(C.created_at, C.id))).all())

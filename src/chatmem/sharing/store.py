"""SQL for shares: read, replace and delete a conversation's share row, and copy a snapshot
into a new conversation as a chain."""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import blocks as blk
from ..conversations import dag
from ..db import schema as t
from ..db.clock import now_ms
from ..db.ids import new_id, share_token
from ..embeddings import schedule_embedding
from ..errors import found

S = t.conversation_shares.c
U = t.users.c


async def share_of(c: AsyncConnection, conv_id: str):
    return (
        await c.execute(select(t.conversation_shares).where(S.conversation_id == conv_id))
    ).first()


async def by_token(c: AsyncConnection, token: str):
    row = (await c.execute(select(t.conversation_shares).where(S.id == token))).first()
    return found(row, "shared conversation not found")


async def user_names(c: AsyncConnection, user_ids: set[str]) -> dict[str, str]:
    ids = sorted(i for i in user_ids if i)
    if not ids:
        return {}
    return {r.id: r.name for r in (await c.execute(select(U.id, U.name).where(U.id.in_(ids))))}


async def replace(c: AsyncConnection, conv, user_id: str, snapshot: list[dict]):
    """Drop the conversation's share (if any) and insert a new one under a fresh token."""
    await c.execute(delete(t.conversation_shares).where(S.conversation_id == conv.id))
    token = share_token()
    await c.execute(
        insert(t.conversation_shares).values(
            id=token,
            conversation_id=conv.id,
            user_id=user_id,
            title=conv.title,
            snapshot=snapshot,
            created_at=now_ms(),
        )
    )
    return await by_token(c, token)


async def revoke(c: AsyncConnection, conv_id: str) -> int:
    res = await c.execute(delete(t.conversation_shares).where(S.conversation_id == conv_id))
    return res.rowcount or 0


async def insert_chain(
    c: AsyncConnection, conv_id: str, user_id: str, messages: list[dict]
) -> None:
    """Insert public snapshot messages as a parent chain; the last one becomes the active leaf."""
    parent, values = None, []
    for depth, m in enumerate(messages):
        mid = new_id("msg")
        values.append(
            dict(
                id=mid,
                conversation_id=conv_id,
                parent_id=parent,
                role=m["role"],
                blocks=m["blocks"],
                search_text=blk.visible_text(m["blocks"]),
                citations=m["citations"],
                attachments=m["attachments"],
                model_label=m.get("model_label", ""),
                fast=int(m["fast"]),
                status="complete",
                created_at=m["created_at"],
                user_id=user_id,
                depth=depth,
            )
        )
        parent = mid
    if not values:
        return
    dag.fill_jumps(values)
    await c.execute(insert(t.messages), values)
    await schedule_embedding(c, conv_id)
    await c.execute(
        update(t.conversations)
        .where(t.conversations.c.id == conv_id)
        .values(
            message_count=len(values),
            last_message_at=max(v["created_at"] for v in values),
            active_leaf_id=parent,
            updated_at=now_ms(),
        )
    )

"""SQL of the context domain: reading a path's tail and writing a conversation's summary blocks.

Why it exists: every statement context needs lives here (docs/architecture.md, "Where SQL lives"):
the recursive page walk and ancestor probe that ``gather`` drives, the conversation reads of a
compaction run and the compare-and-set of ``summary_blocks``. The walking and deciding stays in
``gather``/``compaction``; these are single statements with the caller's connection.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t
from ..db.types import JSONDoc

M = t.messages.c
C = t.conversations.c

_PAGE_SQL = text(
    """
    WITH RECURSIVE path(id, parent_id, n) AS (
        SELECT id, parent_id, 1 FROM messages WHERE id = :start AND conversation_id = :cid
        UNION ALL
        SELECT m.id, m.parent_id, path.n + 1
        FROM messages m JOIN path ON m.id = path.parent_id
        WHERE path.n < :lim
    )
    SELECT m.id, m.parent_id, m.role, m.status, m.blocks, m.depth, m.input_tokens,
           m.context_tokens, m.created_at
    FROM path JOIN messages m ON m.id = path.id
    ORDER BY path.n
    """
).columns(blocks=JSONDoc)

_ANCESTORS_SQL = text(
    """
    WITH RECURSIVE up(id, parent_id, depth) AS (
        SELECT id, parent_id, depth FROM messages WHERE id = :start AND conversation_id = :cid
        UNION ALL
        SELECT m.id, m.parent_id, m.depth
        FROM messages m JOIN up ON m.id = up.parent_id
        WHERE up.depth > :min_depth
    )
    SELECT id FROM up WHERE id IN :anchors
    """
).bindparams(bindparam("anchors", expanding=True))


async def path_page_rows(c: AsyncConnection, conv_id: str, start: str, limit: int) -> list:
    """Up to ``limit`` message rows from ``start`` towards the root, newest first."""
    rows = await hot.execute(c, _PAGE_SQL, {"start": start, "cid": conv_id, "lim": limit})
    return list(rows.all())


async def parents_of(c: AsyncConnection, ids: set[str]) -> dict[str, str | None]:
    """id → current parent_id of the given messages."""
    rows = (await c.execute(select(M.id, M.parent_id).where(M.id.in_(sorted(ids))))).all()
    return {r.id: r.parent_id for r in rows}


async def ancestors_among(
    c: AsyncConnection, conv_id: str, start: str, anchors: list[str]
) -> list[str]:
    """Which of ``anchors`` are ``start`` or its ancestors (walked to the root: depths can be stale)."""
    params = {"start": start, "cid": conv_id, "min_depth": 0, "anchors": anchors}
    return list((await c.execute(_ANCESTORS_SQL, params)).scalars().all())


async def owned_conversation(c: AsyncConnection, conversation_id: str, user_id: str):
    """The conversation row, or None when it is missing or another user's."""
    q = select(t.conversations).where(C.id == conversation_id, C.user_id == user_id)
    return (await c.execute(q)).first()


async def conversation_for_job(c: AsyncConnection, conversation_id: str):
    """(id, user_id, model_id) of a conversation a background job names; None once deleted."""
    q = select(C.id, C.user_id, C.model_id).where(C.id == conversation_id)
    return (await c.execute(q)).first()


async def summary_blocks_for_update(c: AsyncConnection, conversation_id: str) -> list | None:
    """The stored ``summary_blocks`` (row-locked on PostgreSQL, for a compare-and-set)."""
    q = select(C.summary_blocks).where(C.id == conversation_id)
    if c.dialect.name == "postgresql":
        q = q.with_for_update()
    return (await c.execute(q)).scalar()


async def set_summary(c: AsyncConnection, conversation_id: str, values: dict) -> None:
    """Write ``summary_blocks`` (and ``summary`` when given)."""
    await c.execute(update(t.conversations).where(C.id == conversation_id).values(**values))

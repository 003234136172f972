"""Seed-000 agent memories: the (user, agent) rows of chatmem's ``memories`` table as AgentMemory.

The seed has three statuses; chatmem's memory model has six. The mapping:

- ``ACTIVE``, ``QUERY_DEPENDENT`` → ``active`` (both are injected into prompts);
- ``DISABLED``, ``UNKNOWN_CURRENT`` → ``disabled`` (kept, not injected; an unresolved conflict is
  not something the model uses, so showing it as active would mislead);
- ``DELETED`` → ``deleted`` and ``STALE`` (superseded by a newer memory for the same slot) are not
  listed, as the seed's list omits deleted rows; their history is on the native API.

``type`` is ``memory_type`` (empty → 重要事实, seed 000's catch-all for stable facts), ``content`` is
``memory_text`` (cut to the contract's 2,000 characters), ``importance`` is clamped to 1–5, and the
source message is ``source_message_id`` (else the first of ``source_message_ids``), joined only when
it is one of the caller's own messages.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..auth.models import Principal
from ..conversations import blocks as blk
from ..db import schema as t
from ..db.engine import Database
from . import store
from .contracts import AgentMemory, AgentMemoryList, SourceMessage

MEM = t.memories.c
M = t.messages.c

LIST_LIMIT = 100
STATUS_OUT = {"ACTIVE": "active", "QUERY_DEPENDENT": "active", "DISABLED": "disabled",
              "UNKNOWN_CURRENT": "disabled", "DELETED": "deleted"}
LISTED = ("ACTIVE", "QUERY_DEPENDENT", "DISABLED", "UNKNOWN_CURRENT")
STATUS_IN = {"active": "ACTIVE", "disabled": "DISABLED"}
DEFAULT_TYPE = "重要事实"
CONTENT_MAX = 2000


def _source_id(row) -> str | None:
    if row.source_message_id:
        return row.source_message_id
    ids = row.source_message_ids or []
    return ids[0] if ids and isinstance(ids[0], str) else None


def memory_out(row, source) -> AgentMemory:
    src = None
    if source is not None and source.role in ("user", "assistant"):
        src = SourceMessage(id=source.id, role=source.role, content=blk.visible_text(source.blocks),
                            createdAtMs=source.created_at)
    return AgentMemory(
        id=row.id, agentId=row.agent_id, type=(row.memory_type or DEFAULT_TYPE)[:80],
        content=row.memory_text[:CONTENT_MAX], importance=min(5, max(1, int(row.importance))),
        status=STATUS_OUT[row.status], sourceMessageId=_source_id(row), sourceMessage=src,
        createdAtMs=row.created_at, updatedAtMs=row.updated_at)


async def _sources(c: AsyncConnection, user_id: str, rows) -> dict:
    ids = {sid for r in rows if (sid := _source_id(r))}
    if not ids:
        return {}
    q = select(t.messages).where(M.id.in_(ids), M.user_id == user_id)
    return {m.id: m for m in (await c.execute(q)).all()}


async def agent_memories_out(c: AsyncConnection, user_id: str, rows) -> list[AgentMemory]:
    sources = await _sources(c, user_id, rows)
    return [memory_out(r, sources.get(_source_id(r) or "")) for r in rows]


async def list_memories(db: Database, p: Principal, agent_id: str) -> AgentMemoryList:
    """GET /rpc/agent/my/{agentId}/memories: not deleted, newest update first, at most 100."""
    async with db.read() as c:
        await store.owned_agent(c, p.id, agent_id)
        q = (select(t.memories)
             .where(MEM.user_id == p.id, MEM.agent_id == agent_id, MEM.status.in_(LISTED),
                    MEM.memory_text != "")
             .order_by(MEM.updated_at.desc(), MEM.id.desc()).limit(LIST_LIMIT))
        rows = (await c.execute(q)).all()
        items = await agent_memories_out(c, p.id, rows)
    return AgentMemoryList(items=items)

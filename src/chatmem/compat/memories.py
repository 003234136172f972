"""Seed-000 (docs/specs.md) agent memories over chatmem's memory service (one store, every change audited).

The rows are the (user, agent) rows of ``memories``; list, edit and delete go through
``chatmem.memory.service`` so each change writes its ``memory_events`` row and obeys the memory
policy (slot supersession, allowed transitions). This module only checks the agent and translates.

Status mapping (the seed has three statuses, chatmem six):

- ``ACTIVE``, ``QUERY_DEPENDENT`` → ``active`` (both are injected into prompts);
- ``DISABLED``, ``UNKNOWN_CURRENT`` → ``disabled`` (kept, not injected — an unresolved conflict is not
  something the model uses; setting it ``active`` resolves the conflict in its favour);
- ``DELETED`` and ``STALE`` (superseded by a newer memory for the same slot; no status may be set on
  it by hand) are not listed; their history is on the native API.

A PATCH ``status`` equal to the row's current seed status is a no-op (so re-sending "active" for a
QUERY_DEPENDENT row keeps its validity window). ``type`` is ``memory_type`` (empty → 重要事实, seed
000's catch-all for stable facts), ``content`` is ``memory_text`` (cut to the contract's 2,000
characters), and the source message is ``source_message_id`` (else the first of
``source_message_ids``), shown only when the caller can still see it.
"""

from __future__ import annotations

from typing import Literal

from ..auth.models import Principal
from ..db.engine import Database
from ..memory import service as memory_service
from . import store
from .contracts import (
    AgentMemory,
    AgentMemoryList,
    SourceMessage,
    SuccessResult,
    UpdateAgentMemoryRequest,
)

LIST_LIMIT = 100
STATUS_OUT: dict[str, Literal["active", "disabled", "deleted"]] = {
    "ACTIVE": "active",
    "QUERY_DEPENDENT": "active",
    "DISABLED": "disabled",
    "UNKNOWN_CURRENT": "disabled",
    "DELETED": "deleted",
    "STALE": "disabled",
}
LISTED = ["ACTIVE", "QUERY_DEPENDENT", "DISABLED", "UNKNOWN_CURRENT"]
STATUS_IN = {"active": "ACTIVE", "disabled": "DISABLED"}
DEFAULT_TYPE = "重要事实"
CONTENT_MAX = 2000


def _source_id(m: dict) -> str | None:
    if m.get("source_message_id"):
        return m["source_message_id"]
    ids = m.get("source_message_ids") or []
    return ids[0] if ids and isinstance(ids[0], str) else None


def memory_out(m: dict) -> AgentMemory:
    """A memory as the memory service serialises it → AgentMemory."""
    sid = _source_id(m)
    src = next((s for s in m.get("source_messages", []) if s["id"] == sid), None)
    source = None
    if src is not None and src["role"] in ("user", "assistant"):
        source = SourceMessage(
            id=src["id"],
            role=src["role"],
            content=src.get("text", src.get("excerpt", "")),
            createdAtMs=src["created_at"],
        )
    return AgentMemory(
        id=m["id"],
        agentId=m["agent_id"],
        type=(m["memory_type"] or DEFAULT_TYPE)[:80],
        content=m["memory_text"][:CONTENT_MAX],
        importance=min(5, max(1, int(m["importance"]))),
        status=STATUS_OUT[m["status"]],
        sourceMessageId=sid,
        sourceMessage=source,
        createdAtMs=m["created_at"],
        updatedAtMs=m["updated_at"],
    )


async def _check_agent(db: Database, p: Principal, agent_id: str) -> None:
    async with db.read() as c:
        await store.owned_agent(c, p.id, agent_id)


async def list_memories(db: Database, p: Principal, agent_id: str) -> AgentMemoryList:
    """GET /rpc/agent/my/{agentId}/memories: listed statuses, newest update first, at most 100."""
    await _check_agent(db, p, agent_id)
    page = await memory_service.list_memories(
        db, p, status=LISTED, agent_id=agent_id, limit=LIST_LIMIT, full_source_text=True
    )
    return AgentMemoryList(items=[memory_out(m) for m in page["items"] if m["memory_text"]])


async def update_memory(
    db: Database, p: Principal, agent_id: str, memory_id: str, body: UpdateAgentMemoryRequest
) -> AgentMemory:
    """PATCH …/memories/{memoryId}: type, content, importance, active ↔ disabled (audited)."""
    await _check_agent(db, p, agent_id)
    current = await memory_service.get_memory(db, p, memory_id, agent_id=agent_id)  # 404: deleted
    changes: dict = {}
    if body.type is not None:
        changes["memory_type"] = body.type
    if body.content is not None:
        changes["memory_text"] = body.content
    if body.importance is not None:
        changes["importance"] = body.importance
    if body.status is not None and STATUS_OUT[current["status"]] != body.status:
        changes["status"] = STATUS_IN[body.status]
    out = await memory_service.update_memory(
        db, p, memory_id, changes, agent_id=agent_id, full_source_text=True
    )
    return memory_out(out)


async def delete_memory(db: Database, p: Principal, agent_id: str, memory_id: str) -> SuccessResult:
    """DELETE …/memories/{memoryId}: soft delete (audited); 404 when missing or already deleted."""
    await _check_agent(db, p, agent_id)
    await memory_service.delete_memory(db, p, memory_id, agent_id=agent_id)
    return SuccessResult(success=True)

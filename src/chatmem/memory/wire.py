"""Wire shapes for memories: request models and the row → JSON serialiser (seed column names).

Why it exists: routes and the seed-000 (docs/specs.md) compat layer must never see table rows; this decides what a
caller sees of a memory, including its source messages (id, role, excerpt, created_at,
conversation_id) — only those the caller can still see.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from ..contracts.base import Input, Output, when_present
from .policy import STATUSES

_STATUS = "(?:" + "|".join(STATUSES) + ")"
#: A ``status`` query value: one status or several comma-separated (policy.STATUSES). The schema
#: says exactly what the list accepts, so an unknown one is a 422 before the service sees it.
StatusList = Annotated[str, StringConstraints(pattern=f"^{_STATUS}(?:,{_STATUS})*$")]

EXCERPT_CHARS = 280
#: milliseconds: the largest integer every JSON reader holds exactly (IEEE doubles), which a
#: 64-bit column stores on both databases (year 287,396)
MAX_MS = 2**53 - 1


class WorkspaceMemoryIn(Input):
    """A memory added by hand to a workspace's shared memory (no agent scope there)."""

    memory_text: str = Field(min_length=1, max_length=2000)
    memory_type: str = Field(default="", max_length=80)
    slot: str = Field(default="", max_length=64)
    value: str = Field(default="", max_length=500)
    importance: int = Field(default=3, ge=1, le=5)
    status: Literal["ACTIVE", "QUERY_DEPENDENT"] = "ACTIVE"
    # milliseconds; bounded so every value fits a 64-bit column on both databases
    valid_from: int | None = Field(default=None, ge=0, le=MAX_MS)
    valid_until: int | None = Field(default=None, ge=0, le=MAX_MS)


class MemoryIn(WorkspaceMemoryIn):
    """A memory added by hand to the caller's own memory (user-wide, or one agent's)."""

    agent_id: str | None = Field(default=None, min_length=1, max_length=64)


class MemoryPatch(Input):
    memory_text: str | None = Field(default=None, min_length=1, max_length=2000)
    memory_type: str | None = Field(default=None, max_length=80)
    slot: str | None = Field(default=None, max_length=64)
    value: str | None = Field(default=None, max_length=500)
    importance: int | None = Field(default=None, ge=1, le=5)
    status: Literal["ACTIVE", "DISABLED"] | None = Field(
        default=None, description="a user may only turn a memory off and on again"
    )
    reason: str | None = Field(default=None, max_length=500)
    valid_from: int | None = Field(default=None, ge=0, le=MAX_MS, description="null clears it")
    valid_until: int | None = Field(default=None, ge=0, le=MAX_MS, description="null clears it")


class SourceMessage(Output):
    id: str
    role: str
    excerpt: str = Field(description=f"the first {EXCERPT_CHARS} characters of its text")
    created_at: int
    conversation_id: str
    text: str | None = when_present("the whole text, where asked for")


class MemoryOut(Output):
    id: str
    agent_id: str | None = Field(description="null: the memory is user-wide")
    memory_text: str
    memory_type: str
    slot: str
    value: str
    status: str = Field(
        description="ACTIVE | QUERY_DEPENDENT | STALE | UNKNOWN_CURRENT | DISABLED | DELETED"
    )
    confidence: float
    importance: int
    origin: str = Field(description="extracted | user | tool")
    source_message_id: str | None
    source_message_ids: list[str]
    supersedes: list[str]
    superseded_by: list[str]
    affected_domains: list[Any]
    reason: str
    valid_from: int | None
    valid_until: int | None
    created_at: int
    updated_at: int
    source_messages: list[SourceMessage]


class MemoryPage(Output):
    items: list[MemoryOut]
    next_cursor: str | None = None


class MemoryEvent(Output):
    id: str
    event: str = Field(description="created | reinforced | superseded | edited | disabled | …")
    actor: str
    before: Any
    after: Any
    reason: str
    created_at: int


class MemoryVersion(Output):
    id: str
    memory_text: str
    slot: str
    value: str
    status: str
    valid_from: int | None
    valid_until: int | None
    supersedes: list[str]
    superseded_by: list[str]
    created_at: int
    updated_at: int


class MemoryHistory(Output):
    memory: MemoryOut
    events: list[MemoryEvent]
    chain: list[MemoryVersion] = Field(description="the supersession chain, oldest value first")


def source_out(r, *, full: bool = False) -> dict:
    text = r.search_text or ""
    out = {
        "id": r.id,
        "role": r.role,
        "excerpt": text[:EXCERPT_CHARS],
        "created_at": r.created_at,
        "conversation_id": r.conversation_id,
    }
    if full:
        out["text"] = text
    return out


def memory_out(row, sources: dict, *, full_source_text: bool = False) -> dict:
    m = row._mapping
    out = {
        k: m[k]
        for k in (
            "id",
            "agent_id",
            "memory_text",
            "memory_type",
            "slot",
            "value",
            "status",
            "confidence",
            "importance",
            "origin",
            "source_message_id",
            "source_message_ids",
            "supersedes",
            "superseded_by",
            "affected_domains",
            "reason",
            "valid_from",
            "valid_until",
            "created_at",
            "updated_at",
        )
    }
    out["confidence"] = float(out["confidence"])
    ids = list(m["source_message_ids"] or [])
    if m["source_message_id"] and m["source_message_id"] not in ids:
        ids.insert(0, m["source_message_id"])
    out["source_messages"] = [
        source_out(sources[i], full=full_source_text) for i in ids if i in sources
    ]
    return out


def source_ids(rows) -> set[str]:
    ids: set[str] = set()
    for r in rows:
        ids.update(r.source_message_ids or [])
        if r.source_message_id:
            ids.add(r.source_message_id)
    return ids

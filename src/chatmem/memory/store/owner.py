"""Whose memories a statement touches: a user's personal scope or a workspace's shared one.

Why it exists: every memory statement starts from the owner condition, the (user, agent) scope and
the row → ``policy.Mem`` mapping; the other store modules build on these, so they live in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, text

from ...db import schema as t
from .. import policy as pol

MEM = t.memories.c
EV = t.memory_events.c
MSG = t.messages.c

_MEM_FIELDS = (
    "memory_text",
    "memory_type",
    "slot",
    "value",
    "status",
    "origin",
    "confidence",
    "importance",
    "source_message_ids",
    "supersedes",
    "superseded_by",
    "affected_domains",
    "valid_from",
    "valid_until",
    "reason",
)


@dataclass(frozen=True)
class InWorkspace:
    """A workspace's shared memory, changed by ``user_id`` (recorded as the row's creator and as
    each event's user; membership and role are checked by the caller)."""

    workspace_id: str
    user_id: str


Owner = str | InWorkspace


#: The partial index on workspace memories (migration 0016) covers exactly these rows; personal
#: rows — nearly all of them — stay out of it, so a personal read never walks it.
IN_WORKSPACE = text("memories.workspace_id <> ''")


def owner_cond(owner: Owner):
    """The rows of one memory owner: a user's personal rows, or one workspace's."""
    if isinstance(owner, InWorkspace):
        # the literal predicate lets both engines use the partial idx_memories_workspace
        return and_(MEM.workspace_id == owner.workspace_id, IN_WORKSPACE)
    return and_(MEM.user_id == owner, MEM.workspace_id == "")


def owner_uid(owner: Owner) -> str:
    """The user id written on new rows and events."""
    return owner.user_id if isinstance(owner, InWorkspace) else owner


def to_mem(row) -> pol.Mem:
    m = row._mapping
    return pol.Mem(
        id=m["id"],
        memory_text=m["memory_text"],
        slot=m["slot"],
        value=m["value"],
        status=m["status"],
        origin=m["origin"],
        confidence=float(m["confidence"]),
        importance=int(m["importance"]),
        memory_type=m["memory_type"],
        source_message_ids=list(m["source_message_ids"] or []),
        supersedes=list(m["supersedes"] or []),
        superseded_by=list(m["superseded_by"] or []),
        affected_domains=list(m["affected_domains"] or []),
        valid_from=m["valid_from"],
        valid_until=m["valid_until"],
        created_at=m["created_at"],
        reason=m["reason"],
    )


def scope_cond(user_id: Owner, agent_id: str | None):
    """Exactly one scope: user-wide (agent_id NULL) or one (user, agent) pair."""
    agent = MEM.agent_id.is_(None) if agent_id is None else MEM.agent_id == agent_id
    return and_(owner_cond(user_id), agent)

"""Memories and their audit trail of events (docs/data-model.md, "memories")."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Index,
    Table,
    Text,
    text,
)

from ..types import JSONDoc
from ._base import _fk, _int, _json, _ms, _real, _txt, metadata

memories = Table(
    "memories",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    Column("memory_text", Text, nullable=False),
    _txt("memory_type"),
    _txt("slot"),
    _txt("value"),
    _txt("status", "ACTIVE"),  # ACTIVE|QUERY_DEPENDENT|STALE|UNKNOWN_CURRENT|DISABLED|DELETED
    _real("confidence", 0.8),
    _json("source_message_ids"),
    _json("supersedes"),
    _json("superseded_by"),
    _json("affected_domains"),
    _txt("reason"),
    _ms("valid_from", nullable=True),
    _ms("valid_until", nullable=True),
    _ms("created_at"),
    _ms("updated_at"),
    # seed 000
    _fk("agent_id", "agents.id", "CASCADE", nullable=True),  # NULL = user-wide
    _int("importance", 3),
    _fk("source_message_id", "messages.id", "SET NULL", nullable=True),
    # + chatmem
    _txt("origin", "extracted"),  # extracted | user | tool
    # + chatmem (issue 16): a workspace's shared memory ('' = the user's personal memory); the
    #   row's user_id is then the admin who created it (migration 0014)
    _txt("workspace_id"),
    Index("idx_memories_user_status", "user_id", "status"),
    Index("idx_memories_user_slot", "user_id", "slot"),
    Index("idx_memories_user_agent_status", "user_id", "agent_id", "status"),
    # + injection reads the top rows of a status in (importance, updated_at) order, and the
    #   constraints separately, without sorting a user's whole memory (migration 0003)
    Index("idx_memories_inject", "user_id", "status", "importance", "updated_at"),
    Index("idx_memories_user_type_status", "user_id", "memory_type", "status"),
    Index(
        "idx_memories_workspace",
        "workspace_id",
        "status",
        "importance",
        "updated_at",
        sqlite_where=text("workspace_id <> ''"),
        postgresql_where=text("workspace_id <> ''"),
    ),
)

memory_events = Table(
    "memory_events",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("memory_id", "memories.id", "CASCADE"),
    _fk("user_id", "users.id", "CASCADE"),
    Column("event", Text, nullable=False),  # created|reinforced|superseded|edited|disabled|...
    _txt("actor"),  # user id, 'extractor' or 'system'
    Column("before", JSONDoc, nullable=True),
    Column("after", JSONDoc, nullable=True),
    _txt("reason"),
    _ms("created_at"),
    Index("ix_memory_events_memory", "memory_id", "created_at"),
)

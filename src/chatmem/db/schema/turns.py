"""What a running turn holds: the compaction and generation leases and the replayable stream-event
log of an assistant message."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    PrimaryKeyConstraint,
    Table,
    Text,
)

from ..types import JSONDoc, Millis
from ._base import _fk, _ms, metadata

conversation_compaction_leases = Table(
    "conversation_compaction_leases",
    metadata,
    Column(
        "conversation_id",
        Text,
        ForeignKey("conversations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("owner_token", Text, nullable=False),
    _ms("expires_at"),
    Index("idx_conversation_compaction_leases_expires", "expires_at"),
)

conversation_generation_leases = Table(
    "conversation_generation_leases",
    metadata,
    _fk("conversation_id", "conversations.id", "CASCADE"),
    Column("branch_key", Text, nullable=False),
    Column("principal_id", Text, nullable=False),
    Column("owner_token", Text, nullable=False),
    _ms("expires_at"),
    PrimaryKeyConstraint("conversation_id", "branch_key", "principal_id"),
    Index("idx_conversation_generation_leases_expires", "expires_at"),
)

# ── + chatmem infrastructure ────────────────────────────────────────────────────────────────────

stream_events = Table(
    "stream_events",
    metadata,
    _fk("message_id", "messages.id", "CASCADE"),
    Column("seq", Millis, nullable=False),  # 64-bit: Last-Event-ID may be any int64
    Column("type", Text, nullable=False),
    Column("data", JSONDoc, nullable=False),
    _ms("created_at"),
    PrimaryKeyConstraint("message_id", "seq"),
    # + pruning walks the oldest rows in small batches by this key (migration 0011)
    Index("ix_stream_events_created", "created_at", "message_id", "seq"),
)

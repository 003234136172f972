"""The shapes every importer produces and the import pipeline consumes (pure dataclasses).

A parser turns one conversation of a foreign export into a ``SourceConversation``: its messages
as a flat list with source ids and parent ids exactly as the source spelled them (possibly
broken: duplicates, cycles, parents that do not exist). ``tree.plan`` repairs that into a
``Plan`` whose messages are in insertion order (parents first) with chatmem roles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SourceMessage:
    id: str
    parent_id: str | None
    role: str  # user | assistant | tool | system
    blocks: list[dict]
    created_at: int | None = None  # epoch milliseconds
    model: str = ""
    #: why this node is not a visible message (e.g. "hidden_system", "system_message"); its
    #: children move up to its parent
    skip: str | None = None
    #: a tool step (call or output) that belongs to the assistant turn above it: merged into the
    #: parent assistant message when the parent has no other child
    fold: bool = False
    status: str = "complete"  # complete | error
    metadata: dict = field(default_factory=dict)


@dataclass
class SourceConversation:
    id: str
    title: str
    messages: list[SourceMessage]
    current_id: str | None = None  # the source's active leaf, when it has one
    created_at: int | None = None
    updated_at: int | None = None
    model: str = ""
    archived: bool = False
    pinned: bool = False
    starred: bool = False
    metadata: dict = field(default_factory=dict)
    #: problems the parser met that do not stop the import (e.g. an unknown content type)
    warnings: list[str] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)


@dataclass
class PlannedMessage:
    source_id: str
    parent_source_id: str | None
    role: str  # user | assistant
    blocks: list[dict]
    created_at: int
    model: str
    status: str
    depth: int
    merged_ids: list[str] = field(default_factory=list)  # source ids folded into this one
    metadata: dict = field(default_factory=dict)


@dataclass
class Plan:
    source: SourceConversation
    messages: list[PlannedMessage]  # parents before children
    leaf_source_id: str | None
    skipped: Counter  # reason → count of source nodes not imported
    warnings: list[str]
    created_at: int
    updated_at: int


class ConversationError(ValueError):
    """One source conversation cannot be imported (reported per item; the others go on)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

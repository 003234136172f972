"""Wire shapes of the portability routes: imports and their reports, exports, deletions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..contracts.base import Input, Output

Status = Literal["queued", "running", "done", "failed"]


class ReportConversations(Output):
    imported: int = Field(description="new conversations (in a dry run: that would be created)")
    updated: int = Field(description="conversations imported before that gained new messages")
    unchanged: int = Field(description="already imported, nothing new")
    failed: int = Field(description="conversations that could not be imported (see errors)")
    empty: int = Field(description="conversations without a visible message")


class ReportMessages(Output):
    imported: int


class ItemError(Output):
    index: int = Field(description="position of the conversation in the file (0-based)")
    source_id: str | None
    code: str = Field(description="malformed | message_too_large | …")
    message: str


class ItemWarning(Output):
    index: int
    source_id: str | None
    message: str


class ImportReport(Output):
    conversations: ReportConversations
    messages: ReportMessages
    skipped: dict[str, int] = Field(
        description="source nodes not imported, by reason (hidden, system_message, "
        "duplicate_id, empty, unsupported_content:<type>, …)"
    )
    errors: list[ItemError] = Field(description="per-conversation failures (first 200)")
    warnings: list[ItemWarning] = Field(description="repairs made (first 200)")
    replaced_bytes: int = Field(description="invalid UTF-8 sequences replaced by U+FFFD")


class ImportOut(Output):
    id: str
    status: Status
    format: str = Field(description="chatgpt | claude | openwebui | librechat | chatmem")
    requested_format: str
    filename: str
    dry_run: bool
    bytes_total: int
    bytes_read: int
    progress: float = Field(ge=0, le=1)
    conversations_processed: int
    report: ImportReport
    error: str = Field(description="why the file stopped being readable ('' when it did not)")
    created_at: int
    updated_at: int
    finished_at: int | None


class ImportPage(Output):
    items: list[ImportOut]


class MessageDoc(Output):
    id: str
    parent_id: str | None
    role: str
    blocks: list[dict[str, Any]]
    created_at: int
    model_id: str
    model_label: str
    status: str
    stop_reason: str | None
    error: str
    attachments: list[Any]
    citations: list[Any]
    feedback: str
    metadata: dict[str, Any]


class ConversationDoc(Output):
    id: str
    title: str
    created_at: int
    updated_at: int
    model_id: str
    project_id: str | None
    agent_id: str | None
    active_leaf_id: str | None
    message_count: int
    last_message_at: int | None
    summary: str | None
    pinned: bool
    starred: bool
    archived: bool
    messages: list[MessageDoc] = Field(description="the whole tree, parents before children")


class ExportDocument(Output):
    """chatmem's export format (what ``POST /api/imports`` reads back as ``chatmem``)."""

    format: Literal["chatmem"]
    version: int
    exported_at: int
    conversations: list[ConversationDoc]


class MemoryEventDoc(Output):
    id: str
    event: str
    actor: str
    before: Any = None
    after: Any = None
    reason: str
    created_at: int


class MemoryDoc(Output):
    id: str
    memory_text: str
    memory_type: str
    slot: str
    value: str
    status: str
    confidence: float
    importance: int
    origin: str
    agent_id: str | None
    source_message_id: str | None
    source_message_ids: list[Any]
    supersedes: list[Any]
    superseded_by: list[Any]
    affected_domains: list[Any]
    reason: str
    valid_from: int | None
    valid_until: int | None
    created_at: int
    updated_at: int
    history: list[MemoryEventDoc]


class MemoriesExport(Output):
    format: Literal["chatmem.memories"]
    version: int
    exported_at: int
    memories: list[MemoryDoc]


class ExportOut(Output):
    id: str
    status: Status
    size_bytes: int
    counts: dict[str, int]
    error: str
    created_at: int
    updated_at: int
    expires_at: int | None = Field(description="when the archive is deleted")
    download_url: str | None = Field(description="set once the archive is built")


class ExportPage(Output):
    items: list[ExportOut]


class DeleteAccountIn(Input):
    confirm: str = Field(
        min_length=1, max_length=320, description="the account's email, typed again to confirm"
    )


class DeletionOut(Output):
    audit_id: str
    deleted: dict[str, int] = Field(description="rows deleted, per table")


class DeletionAudit(Output):
    id: str
    actor: Literal["self", "admin"]
    actor_id: str = Field(description="the admin who deleted ('' for self-deletion)")
    counts: dict[str, int]
    created_at: int


class DeletionPage(Output):
    items: list[DeletionAudit]

"""Wire shapes for conversations and messages: request models and row → JSON serialisers.

Table rows never leave the service layer as-is: these functions choose what a caller may see
(``cost`` only for admins, ``provider_state`` never) under the seed column names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    WithJsonSchema,
    model_validator,
)

from ..contracts.base import NO_NUL, Input, NewTitle, Output, Title, when_present
from . import blocks as blk

Role = Literal["user", "assistant"]

CONV_FLAGS = ("fast", "pinned", "archived", "starred", "is_public")


def conversation_out(row) -> dict:
    m = row._mapping
    out = {
        k: m[k]
        for k in (
            "id",
            "title",
            "project_id",
            "provider",
            "model_id",
            "kb_ids",
            "rag_mode",
            "summary_blocks",
            "active_leaf_id",
            "inline_source_conv",
            "inline_parent_id",
            "inline_quote",
            "workspace_id",
            "agent_id",
            "summary",
            "message_count",
            "last_message_at",
            "created_at",
            "updated_at",
        )
    }
    for k in CONV_FLAGS:
        out[k] = bool(m[k])
    return out


USAGE_FIELDS = (
    "input_tokens",
    "context_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


def message_out(row, branch: dict | None = None, *, is_admin: bool = False) -> dict:
    m = row._mapping
    out = {
        k: m[k]
        for k in (
            "id",
            "conversation_id",
            "parent_id",
            "role",
            "blocks",
            "status",
            "stop_reason",
            "error",
            "provider",
            "model_id",
            "model_label",
            "attachments",
            "citations",
            "credits",
            "currency",
            "gen_ms",
            "created_at",
            "feedback",
            "author_id",
            "user_id",
            "agent_id",
            "metadata",
            "depth",
            "selected_user_skill_ids",
        )
    }
    out["text"] = blk.visible_text(m["blocks"])
    out["fast"] = bool(m["fast"])
    if out["fast"] and not is_admin:  # fast mode masks the real model from users (seed 001)
        out["provider"] = out["model_id"] = out["model_label"] = ""
    out["usage"] = {k: m[k] for k in USAGE_FIELDS}
    if is_admin:
        out["cost"] = m["cost"]
    verify = m["verify"]
    out["verify"] = json.loads(verify) if verify else None
    b = branch or {}
    out["branch_index"] = b.get("branch_index", 0)
    out["branch_count"] = b.get("branch_count", 1)
    out["sibling_ids"] = b.get("sibling_ids", [m["id"]])
    return out


class Block(BaseModel):
    """One typed content block (``kind`` is one of blocks.BLOCK_KINDS); kind-specific fields such
    as ``text``, ``name``/``arguments`` (tool_call) or ``url`` (image) ride along."""

    model_config = ConfigDict(extra="allow")
    kind: str
    text: str | None = None


class SummaryBlock(Output):
    """A compaction summary applying to the active path when its anchor is on it."""

    id: str | None = None
    level: int | None = None
    from_message_id: str | None = None
    anchor_message_id: str | None = None
    text: str | None = None
    tokens: int | None = None
    media: Any = None
    message_count: int | None = None
    created_at: int | None = None


class ConversationOut(Output):
    id: str
    title: str
    project_id: str | None
    provider: str
    model_id: str
    kb_ids: list[Any]
    rag_mode: str
    summary_blocks: list[SummaryBlock]
    active_leaf_id: str | None
    inline_source_conv: str = Field(description="the source conversation of an inline thread")
    inline_parent_id: str = Field(description="the anchor message of an inline thread")
    inline_quote: str
    workspace_id: str
    agent_id: str | None
    summary: str | None
    message_count: int
    last_message_at: int | None
    created_at: int
    updated_at: int
    fast: bool
    pinned: bool
    archived: bool
    starred: bool
    is_public: bool


class ConversationPage(Output):
    items: list[ConversationOut]
    next_cursor: str | None = None


class Usage(Output):
    input_tokens: int
    context_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


class MessageOut(Output):
    id: str
    conversation_id: str
    parent_id: str | None
    role: Role
    blocks: list[Block]
    text: str = Field(description="the visible text: the text blocks joined")
    status: Literal["complete", "streaming", "error"]
    stop_reason: str | None
    error: str
    provider: str
    model_id: str
    model_label: str
    attachments: list[Any]
    citations: list[Any]
    credits: float
    currency: str
    gen_ms: int
    created_at: int
    feedback: str
    author_id: str
    user_id: str
    agent_id: str | None
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="caller metadata and the context report (not in stream events)",
    )
    depth: int
    selected_user_skill_ids: list[Any]
    fast: bool
    usage: Usage
    cost: float | None = when_present("admins only")
    verify: Any = Field(description="the audit record, or null when not audited")
    branch_index: int
    branch_count: int
    sibling_ids: list[str]


class MessagePage(Output):
    """A page of the active path (oldest first; ``next_cursor`` pages further back) or, with
    ``mode=tree``, every message of the conversation."""

    items: list[MessageOut]
    next_cursor: str | None = None
    active_leaf_id: str | None


class RoundDeleted(Output):
    deleted_ids: list[str]
    deleted: int
    conversation: ConversationOut


class ConversationIn(Input):
    title: Title | None = None
    project_id: str | None = Field(default=None, min_length=1, max_length=64)
    agent_id: str | None = Field(default=None, min_length=1, max_length=64)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    pinned: bool = False
    starred: bool = False
    workspace_id: str | None = Field(
        default=None, min_length=1, max_length=64, description="create it in this workspace"
    )
    is_public: bool = Field(
        default=False,
        description="workspace conversations: shared with every member (else only its creator "
        "and the workspace admins see it); ignored for personal ones",
    )


class ConversationPatch(Input):
    title: NewTitle | None = None
    project_id: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    pinned: bool | None = None
    starred: bool | None = None
    archived: bool | None = None
    is_public: bool | None = None


def _blocks(v) -> list[dict]:
    try:
        return blk.normalize(v)
    except blk.BlockError as e:
        raise ValueError(str(e)) from None


def _block_schema() -> dict:
    """What ``blocks.normalize`` accepts of one block, as JSON Schema: ``kind`` (or, without it,
    ``type``) one of BLOCK_KINDS; a text or thinking block has a string ``text``; no NUL."""

    def by(key: str) -> dict:
        return {
            "required": [key],
            "properties": {key: {"enum": list(blk.BLOCK_KINDS)}},
            "if": {"properties": {key: {"enum": ["text", "thinking"]}}},
            "then": {
                "required": ["text"],
                "properties": {"text": {"type": "string", "pattern": NO_NUL}},
            },
        }

    return {
        "type": "object",
        "anyOf": [by("kind"), {**by("type"), "not": {"required": ["kind"]}}],
        "propertyNames": {"pattern": NO_NUL},
        "additionalProperties": {"not": {"type": "string", "pattern": "\\u0000"}},
    }


#: Message content on the wire: a string or a list of typed blocks, normalised to blocks (so code
#: reading a validated model sees blocks; the type checker is told the validated type).
if TYPE_CHECKING:
    Content = list[dict[str, Any]]
else:
    BlockIn = Annotated[dict[str, Any], WithJsonSchema(_block_schema())]
    Content = Annotated[
        str | Annotated[list[BlockIn], Field(min_length=1)], AfterValidator(_blocks)
    ]


class MessageIn(Input):
    content: Content
    role: Role = "user"
    parent_id: str | None = Field(default=None, max_length=64)
    # edit-and-resend (seed 001's ``branch: true``): append under ``parent_id`` exactly as given,
    # so that with no parent the message starts a new root instead of following the active leaf
    branch: bool = False
    model: str | None = Field(default=None, max_length=200)
    generate: bool | None = None
    metadata: dict[str, Any] | None = None
    # log mode only: when the message was originally written (integer epoch milliseconds), so
    # imported history keeps its dates; the upper bound ("not in the future") is checked by the
    # service against its clock, the type here keeps it a non-negative 64-bit integer
    created_at: StrictInt | None = Field(default=None, ge=0, le=2**53 - 1)  # exact in JSON numbers

    @property
    def log_mode(self) -> bool:
        return self.role == "assistant" or self.generate is False

    @model_validator(mode="after")
    def _created_at_only_in_log_mode(self) -> MessageIn:
        if self.created_at is not None and not self.log_mode:
            raise ValueError(
                "created_at is accepted only when appending without generation "
                "(generate: false or role: assistant)"
            )
        return self


class MessagePatch(Input):
    content: Content


class LeafIn(Input):
    leaf_id: str = Field(min_length=1, max_length=64)


class ForkIn(Input):
    title: Title | None = None
    message_id: str | None = Field(default=None, max_length=64)  # fork the path up to here

"""Wire shapes for conversations and messages: request models and row → JSON serialisers.

Table rows never leave the service layer as-is: these functions choose what a caller may see
(``cost`` only for admins, ``provider_state`` never) under the seed column names.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from ..contracts.base import Input
from ..errors import BadRequest
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


def encode_cursor(*parts: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, types: tuple[type, ...]) -> tuple:
    """Parse an opaque cursor made by ``encode_cursor``; anything else → 400 invalid_cursor."""
    try:
        pad = "=" * (-len(cursor) % 4)
        parts = json.loads(base64.urlsafe_b64decode(cursor + pad))
        if not isinstance(parts, list) or len(parts) != len(types):
            raise ValueError
        for v, typ in zip(parts, types):
            if type(v) is not typ:  # exact: bool is not an int here
                raise ValueError
            if typ is int and not -(2**63) <= v < 2**63:  # must fit a BIGINT
                raise ValueError
        return tuple(parts)
    except (ValueError, TypeError):
        raise BadRequest("invalid cursor", code="invalid_cursor") from None


class ConversationIn(Input):
    title: str | None = Field(default=None, max_length=200)
    project_id: str | None = Field(default=None, min_length=1, max_length=64)
    agent_id: str | None = Field(default=None, min_length=1, max_length=64)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    pinned: bool = False
    starred: bool = False


class ConversationPatch(Input):
    title: str | None = Field(default=None, min_length=1, max_length=200)
    project_id: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    pinned: bool | None = None
    starred: bool | None = None
    archived: bool | None = None


def _blocks(v) -> list[dict]:
    try:
        return blk.normalize(v)
    except blk.BlockError as e:
        raise ValueError(str(e)) from None


#: Message content on the wire: a string or a list of typed blocks, normalised to blocks.
Content = Annotated[str | list[dict[str, Any]], AfterValidator(_blocks)]


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

    @property
    def log_mode(self) -> bool:
        return self.role == "assistant" or self.generate is False


class MessagePatch(Input):
    content: Content


class LeafIn(Input):
    leaf_id: str = Field(min_length=1, max_length=64)


class ForkIn(Input):
    title: str | None = Field(default=None, max_length=200)
    message_id: str | None = Field(default=None, max_length=64)  # fork the path up to here

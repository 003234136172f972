"""The conversation domain: agents (seed 000's companions), projects, conversations, the message
tree, feedback on messages and the app, and conversation shares (docs/data-model.md)."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Table,
    Text,
    func,
    text,
)

from ..types import Bytes, Millis
from ._base import _big, _fk, _flag, _int, _json, _ms, _real, _txt, metadata

# ── seed 000: companion agents (user_agent_companions) ──────────────────────────────────────────

agents = Table(
    "agents",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    Column("name", Text, nullable=False),
    Column("handle", Text, nullable=False),
    _txt("headline"),
    _txt("description"),
    _txt("story_background"),
    _txt("personality_prompt"),
    _txt("tone_prompt"),
    _txt("guardrails_prompt"),
    _txt("opening_message", None),
    _txt("default_prompt"),
    _txt("image_key", None),
    _txt("visibility", "private"),  # private | public
    _txt("status", "published"),  # draft | published | archived
    _txt("last_assistant_message", None),
    _ms("last_assistant_message_at", nullable=True),
    _ms("created_at"),
    _ms("updated_at"),
    Index("ix_agents_user", "user_id"),
)

# ── seed 001: conversation domain ───────────────────────────────────────────────────────────────

projects = Table(
    "projects",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    Column("name", Text, nullable=False),
    _txt("description"),
    _txt("instructions"),
    _txt("accent", "violet"),
    _txt("emoji"),
    _flag("pinned"),
    _fk("kb_id", "knowledge_bases.id", "SET NULL", nullable=True),
    _flag("auto_add_uploads"),
    _ms("created_at"),
    _ms("updated_at"),
    _flag("is_public", 1),
    _txt("workspace_id"),
    Index("idx_projects_user", "user_id"),
    Index(
        "idx_projects_user_name_unique",
        "user_id",
        func.coalesce(text("workspace_id"), text("''")),
        func.lower(func.trim(text("name"))),
        unique=True,
    ),
)

conversations = Table(
    "conversations",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _fk("project_id", "projects.id", "SET NULL", nullable=True),
    _txt("title", "新对话"),
    _txt("provider"),
    _txt("model_id"),
    _flag("fast"),
    _json("kb_ids"),
    _txt("rag_mode", "auto"),
    _json("summary_blocks"),
    _txt("active_leaf_id", None),  # soft reference, no FK: the reading pointer
    _json("provider_state", "{}"),
    _flag("pinned"),
    _flag("archived"),
    _flag("starred"),
    _txt("inline_source_conv"),
    _txt("inline_parent_id"),
    _txt("inline_quote"),
    _flag("is_public", 0),
    _ms("created_at"),
    _ms("updated_at"),
    _txt("workspace_id"),
    # seed 000
    _fk("agent_id", "agents.id", "CASCADE", nullable=True),
    _txt("summary", None),
    _big("message_count"),  # 64-bit like every counter and sequence (migration 0006)
    _ms("last_message_at", nullable=True),
    # + chatmem
    _txt("memory_cursor", None),  # last active-path message memory extraction has processed
    _flag("is_agent_default"),
    # + a fork answers before its copy runs (migration 0023, conversations/forks.py): the source
    #   and the copy's plan while the copy is pending, NULL once it ran (and for every other
    #   conversation); the key has no cascade: a source cannot go while a fork still reads it
    Column("fork_source_id", Text, ForeignKey("conversations.id"), nullable=True),
    Column("fork_plan", Text, nullable=True),  # JSON text
    Index("idx_conv_user", "user_id"),
    Index("idx_conv_project", "project_id"),
    Index(
        "idx_conv_user_updated",
        "user_id",
        "archived",
        text("pinned DESC"),
        text("updated_at DESC"),
    ),
    Index("idx_conv_inline", "inline_source_conv"),
    Index(
        "idx_conv_workspace_updated",
        "workspace_id",
        "archived",
        text("pinned DESC"),
        text("updated_at DESC"),
    ),
    Index("idx_conv_user_agent", "user_id", "agent_id"),
    Index(
        "idx_conv_fork_source",
        "fork_source_id",
        sqlite_where=text("fork_source_id IS NOT NULL"),
        postgresql_where=text("fork_source_id IS NOT NULL"),
    ),
    Index(
        "uq_conv_agent_default",
        "user_id",
        "agent_id",
        unique=True,
        sqlite_where=text("is_agent_default = 1"),
        postgresql_where=text("is_agent_default = 1"),
    ),
)

messages = Table(
    "messages",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("conversation_id", "conversations.id", "CASCADE"),
    _fk("parent_id", "messages.id", "CASCADE", nullable=True),
    Column("role", Text, nullable=False),  # user | assistant
    _txt("provider"),
    _txt("model_id"),
    _txt("model_label"),
    _flag("fast"),
    _json("blocks"),
    _txt("raw", None),
    _txt("stop_reason", None),
    _json("attachments"),
    _json("selected_user_skill_ids"),
    _json("citations"),
    _big("input_tokens"),
    _big("context_tokens"),
    _big("output_tokens"),
    _big("cache_read_tokens"),
    _big("cache_write_tokens"),
    _real("cost"),
    _txt("currency", "USD"),
    _real("credits"),
    _txt("status", "complete"),  # complete | streaming | error
    _txt("error"),
    _big("gen_ms"),
    _txt("search_text"),
    _txt("verify"),  # JSON audit or '' = not audited
    _ms("created_at"),
    _txt("feedback"),  # legacy mirror: '' | like | dislike
    _txt("author_id"),
    # seed 000
    _fk("user_id", "users.id", "CASCADE"),
    _fk("agent_id", "agents.id", "CASCADE", nullable=True),
    _json("metadata", "{}"),
    # + chatmem
    _big("depth"),  # a position: root = 0, parent + 1; skips after a round deletion (data-model)
    # + a skew-binary jump pointer (migration 0018, conversations/dag.jump_for): an ancestor and
    #   its depth; NULL = the message itself (roots, rows written before 0018). Lets a switch test
    #   "is X an ancestor of this leaf" in O(log depth) lookups (tree_store.newest_descendant).
    Column("jump_id", Text, nullable=True),
    Column("jump_depth", Millis, nullable=True),
    # (no single-column conversation_id index: the composite ones below lead with it; 0020)
    Index("idx_messages_parent", "parent_id"),
    Index("idx_messages_conv_created", "conversation_id", "created_at"),
    Index("idx_messages_role_created", "role", "created_at"),
    Index("idx_messages_model_role_created", "model_id", "role", "created_at"),
    Index("idx_messages_conv_parent", "conversation_id", "parent_id"),
    Index("idx_messages_user_status", "user_id", "status"),
    # + the sweeper reads only the rows still streaming (migration 0011): its cost follows the
    #   number of running turns, not the size of the history
    Index(
        "idx_messages_streaming",
        "created_at",
        sqlite_where=text("status = 'streaming'"),
        postgresql_where=text("status = 'streaming'"),
    ),
)

message_feedback = Table(
    "message_feedback",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("message_id", "messages.id", "CASCADE"),
    _fk("conversation_id", "conversations.id", "CASCADE"),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("workspace_id"),
    _txt("model_id"),
    _txt("channel_id"),
    Column("rating", Text, nullable=False),
    _json("reasons"),
    _txt("comment"),
    _ms("created_at"),
    _ms("updated_at"),
    CheckConstraint("rating IN ('like', 'dislike')", name="rating"),
    Index("uq_message_feedback_message_user", "message_id", "user_id", unique=True),
    Index("idx_message_feedback_updated", "updated_at"),
    Index("idx_message_feedback_model_updated", "model_id", "updated_at"),
    Index("idx_message_feedback_rating_updated", "rating", "updated_at"),
    Index("idx_message_feedback_conv", "conversation_id"),
    Index("idx_message_feedback_user_message", "user_id", "message_id"),
)

user_feedback = Table(
    "user_feedback",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _fk("message_id", "messages.id", "SET NULL", nullable=True),
    _fk("conversation_id", "conversations.id", "SET NULL", nullable=True),
    _txt("conversation_title"),
    _txt("workspace_id"),  # + chatmem (issue 16): the conversation's workspace, a snapshot
    Column("description", Text, nullable=False),
    _txt("page_path"),
    _txt("user_agent"),
    _int("viewport_width"),
    _int("viewport_height"),
    Column("screenshot", Bytes, nullable=True),
    _txt("screenshot_mime"),
    _int("screenshot_width"),
    _int("screenshot_height"),
    _ms("created_at"),
    Index("idx_user_feedback_created", text("created_at DESC"), text("id DESC")),
    Index("idx_user_feedback_user_created", "user_id", text("created_at DESC")),
)

conversation_shares = Table(
    "conversation_shares",
    metadata,
    Column("id", Text, primary_key=True),  # the public 192-bit token
    _fk("conversation_id", "conversations.id", "CASCADE"),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("title"),
    _json("snapshot"),
    _ms("created_at"),
    Index("idx_conv_shares_conv", "conversation_id", unique=True),
    Index("idx_conv_shares_user", "user_id"),
)

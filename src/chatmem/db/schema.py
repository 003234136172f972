"""The one schema: every table of both seeds plus chatmem's own, for SQLite and PostgreSQL.

Seed columns keep their seed names, types and defaults (flags are INTEGER 0/1, times are integer
milliseconds, JSON is TEXT on SQLite and JSONB on PostgreSQL). Additions are marked ``+`` in the
comments. Alembic migrations are generated from this module and a test checks they do not drift.

Deliberate choices where the seeds are silent or disagree:
- lease ``expires_at`` is in milliseconds like every other time (seed 001's (docs/specs.md) docs say seconds, its
  code stored nanoseconds); one unit everywhere removes a class of bugs;
- ``knowledge_bases`` exists only so ``projects.kb_id`` keeps its seeded SET NULL foreign key;
- ``conversations.is_agent_default`` (+) backs the partial unique index that gives each
  (user, agent) exactly one default conversation (seed 000) while still allowing other agent chats.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    func,
    text,
)

from .types import Bytes, Flag, JSONDoc, Millis

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


def _txt(name: str, default: str | None = "", **kw) -> Column:
    if default is None:
        return Column(name, Text, nullable=True, **kw)
    return Column(name, Text, nullable=False, server_default=text(f"'{default}'"), **kw)


def _flag(name: str, default: int = 0) -> Column:
    return Column(name, Flag, nullable=False, server_default=text(str(default)))


def _int(name: str, default: int = 0) -> Column:
    return Column(name, Integer, nullable=False, server_default=text(str(default)))


def _big(name: str, default: int = 0) -> Column:
    return Column(name, Millis, nullable=False, server_default=text(str(default)))


def _real(name: str, default: float = 0) -> Column:
    return Column(name, Float(precision=53), nullable=False, server_default=text(str(default)))


def _json(name: str, default: str = "[]") -> Column:
    return Column(name, JSONDoc, nullable=False, server_default=text(f"'{default}'"))


def _ms(name: str, nullable: bool = False) -> Column:
    return Column(name, Millis, nullable=nullable)


def _fk(name: str, target: str, ondelete: str, nullable: bool = False) -> Column:
    return Column(name, Text, ForeignKey(target, ondelete=ondelete), nullable=nullable)


# ── accounts ────────────────────────────────────────────────────────────────────────────────────

users = Table(
    "users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("email", Text, nullable=False, unique=True),  # stored lower-cased
    _txt("name"),
    _txt("password_hash"),  # argon2; '' = no password login
    _txt("role", "user"),  # user | admin
    _json("settings", "{}"),  # {"memory_enabled": bool, ...}
    _flag("disabled"),
    _ms("created_at"),
    _ms("updated_at"),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("name"),
    Column("prefix", Text, nullable=False),  # first characters, shown in lists
    Column(
        "key_hash", Text, nullable=False, unique=True
    ),  # sha256 of the key; the key is shown once
    _ms("created_at"),
    _ms("last_used_at", nullable=True),
    _ms("revoked_at", nullable=True),
    Index("ix_api_keys_user", "user_id"),
)

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", Text, primary_key=True),  # sha256 of the cookie value
    _fk("user_id", "users.id", "CASCADE"),
    Column("csrf_token", Text, nullable=False),
    _ms("created_at"),
    _ms("expires_at"),
    Index("ix_web_sessions_user", "user_id"),
    Index("ix_web_sessions_expires", "expires_at"),
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    _fk("owner_id", "users.id", "CASCADE"),
    _ms("created_at"),
    _ms("updated_at"),
)

workspace_members = Table(
    "workspace_members",
    metadata,
    _fk("workspace_id", "workspaces.id", "CASCADE"),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("role", "member"),  # owner | admin | member
    _ms("created_at"),
    PrimaryKeyConstraint("workspace_id", "user_id"),
    Index("ix_workspace_members_user", "user_id"),
)

# + chatmem: invitations to a workspace — bound to an email (the invitee accepts from their list)
# or an open one-time link (whoever holds the token joins once). Only the token's SHA-256 is kept.
workspace_invites = Table(
    "workspace_invites",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("workspace_id", "workspaces.id", "CASCADE"),
    _txt("email"),  # lower-cased; '' = a link invite
    _txt("role", "member"),  # admin | member
    Column("token_hash", Text, nullable=False, unique=True),
    _fk("created_by", "users.id", "CASCADE"),
    _ms("created_at"),
    _ms("expires_at"),
    Index("ix_workspace_invites_workspace", "workspace_id"),
    Index("ix_workspace_invites_email", "email"),
)

knowledge_bases = Table(
    "knowledge_bases",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("workspace_id"),
    Column("name", Text, nullable=False),
    _txt("description"),
    _ms("created_at"),
    _ms("updated_at"),
    Index("ix_knowledge_bases_user", "user_id"),
)

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
    _big("depth"),  # root = 0; makes path paging and sibling math cheap
    Index("idx_messages_conv", "conversation_id"),
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

jobs = Table(
    "jobs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("kind", Text, nullable=False),
    _json("payload", "{}"),
    _txt("dedupe_key", None),
    _txt("status", "queued"),  # queued | running | done | failed
    _ms("run_after"),
    _int("attempts"),
    _int("max_attempts", 5),
    _txt("locked_by"),
    _ms("locked_until", nullable=True),
    _txt("last_error"),
    _ms("created_at"),
    _ms("updated_at"),
    Index("ix_jobs_status_run_after", "status", "run_after"),
    Index("ix_jobs_status_updated", "status", "updated_at"),  # + reaping old jobs in batches
    Index(
        "uq_jobs_dedupe_queued",
        "dedupe_key",
        unique=True,
        sqlite_where=text("status = 'queued'"),
        postgresql_where=text("status = 'queued'"),
    ),
)

# + vectors of messages and memories (embeddings/, migration 0005): one portable table. The owner
#   row's foreign key deletes its vectors with it (message, memory, conversation, user); triggers
#   (migration only) delete a vector when its message's text or its memory's text changes, or the
#   memory stops being injectable, so a stale vector is never searched.
embeddings = Table(
    "embeddings",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    Column("owner_kind", Text, nullable=False),  # message | memory
    _fk("message_id", "messages.id", "CASCADE", nullable=True),
    _fk("memory_id", "memories.id", "CASCADE", nullable=True),
    _fk("conversation_id", "conversations.id", "CASCADE", nullable=True),  # messages only
    Column("model", Text, nullable=False),  # <embedder>:<model>[@<dimensions>]
    Column("dimensions", Integer, nullable=False),
    Column("text_hash", Text, nullable=False),  # of the text the vector was computed from
    Column("vector", Bytes, nullable=False),  # float32 little-endian, unit length
    _ms("created_at"),
    CheckConstraint(
        "(owner_kind = 'message' AND message_id IS NOT NULL AND memory_id IS NULL) OR "
        "(owner_kind = 'memory' AND memory_id IS NOT NULL AND message_id IS NULL)",
        name="owner",
    ),
    Index("uq_embeddings_message_model", "message_id", "model", unique=True),
    Index("uq_embeddings_memory_model", "memory_id", "model", unique=True),
    # the search scope in newest-first order: one conversation's newest N is an index range
    Index("idx_embeddings_user_scope", "user_id", "owner_kind", "model", "conversation_id", "id"),
)

# + the OpenAI-compatible door (openai_compat/, migration 0007): which conversation a stateless
#   client's resent history continues. Each user message stored through /v1 records the hash of
#   the request messages up to and including it; a later request whose history (minus its new
#   turn) hashes to it continues that conversation instead of duplicating it.
v1_prefixes = Table(
    "v1_prefixes",
    metadata,
    _fk("user_id", "users.id", "CASCADE"),
    Column("prefix_hash", Text, nullable=False),  # sha256 of the canonical message list
    _fk("conversation_id", "conversations.id", "CASCADE"),
    _fk("message_id", "messages.id", "CASCADE"),  # the user message that ends the prefix
    _ms("created_at"),
    PrimaryKeyConstraint("user_id", "prefix_hash"),
    Index("idx_v1_prefixes_message", "message_id"),
    Index("idx_v1_prefixes_conversation", "conversation_id"),
)

# + portability (portability/, migration 0009): imports run as jobs whose progress and report
#   live here; ``import_sources`` keeps each imported conversation's source id (provenance, and
#   what makes a second import of the same file create nothing new); ``exports`` are the "all my
#   data" archives built by a job; ``account_deletions`` audits deletions by counts only — no id,
#   email or content of the deleted user.
imports = Table(
    "imports",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("format"),  # detected or named: chatgpt | claude | openwebui | librechat | chatmem
    _txt("requested_format", "auto"),
    _txt("filename"),
    _txt("status", "queued"),  # queued | running | done | failed
    _flag("dry_run"),
    _txt("path"),  # the stored upload ('' once deleted)
    _flag("owns_file", 1),  # 0: a local file named by the CLI, never deleted by chatmem
    _big("bytes_total"),
    _big("bytes_read"),
    _big("items_done"),  # source conversations processed (resumes after a crash)
    _json("report", "{}"),
    _txt("error"),
    _ms("created_at"),
    _ms("updated_at"),
    _ms("finished_at", nullable=True),
    Index("idx_imports_user_created", "user_id", "created_at"),
)

import_sources = Table(
    "import_sources",
    metadata,
    _fk("user_id", "users.id", "CASCADE"),
    Column("source", Text, nullable=False),  # the format
    Column("source_id", Text, nullable=False),  # the conversation's id in the source
    _fk("conversation_id", "conversations.id", "CASCADE"),
    _txt("import_id"),
    _ms("created_at"),
    PrimaryKeyConstraint("user_id", "source", "source_id"),
    Index("idx_import_sources_conversation", "conversation_id"),
)

exports = Table(
    "exports",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("status", "queued"),  # queued | running | done | failed
    _txt("path"),
    _big("size_bytes"),
    _json("counts", "{}"),
    _txt("error"),
    _ms("created_at"),
    _ms("updated_at"),
    _ms("expires_at", nullable=True),
    Index("idx_exports_user_created", "user_id", "created_at"),
)

account_deletions = Table(
    "account_deletions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("actor", Text, nullable=False),  # self | admin
    _txt("actor_id"),  # the admin's id ('' for self; cleared if that admin is deleted later)
    _json("counts", "{}"),  # table → rows deleted
    _ms("created_at"),
    Index("idx_account_deletions_created", "created_at"),
)

# + job workers' heartbeats (jobs/heartbeat.py, migration 0010): each running worker upserts its
#   row every ``worker_heartbeat_s`` and deletes it when it stops, so ``/api/ready`` and the
#   ``chatmem_workers_alive`` metric can tell whether anything is running the job queue. Rows of
#   workers that died are ignored once stale and deleted after a day.
workers = Table(
    "workers",
    metadata,
    Column("id", Text, primary_key=True),  # host:pid:random (jobs.worker.new_worker_id)
    Column("host", Text, nullable=False),
    _int("pid"),
    _json("kinds"),  # the job kinds it claims
    _ms("started_at"),
    _ms("seen_at"),
    Index("idx_workers_seen_at", "seen_at"),
)

# + deployment-wide duties that one process at a time should do (event pruning, reaping old jobs):
#   a named lease, taken and renewed by whichever process runs the duty (db/singleton.py,
#   migration 0011)
service_leases = Table(
    "service_leases",
    metadata,
    Column("name", Text, primary_key=True),
    Column("holder", Text, nullable=False),
    _ms("expires_at"),
)

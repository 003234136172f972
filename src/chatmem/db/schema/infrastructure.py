"""chatmem's own infrastructure tables: the job queue, vectors, the /v1 history prefixes,
portability (imports, their sources, exports, deletion audits), worker heartbeats and service
leases."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)

from ..types import Bytes
from ._base import _big, _fk, _flag, _int, _json, _ms, _txt, metadata

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

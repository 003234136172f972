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

The tables are split by domain into sibling modules (accounts, conversations, memory, turns,
infrastructure), each defining its tables on the one ``metadata`` of ``_base``; they are imported
here in the order the tables were always defined, and every table is importable from this package
(``from chatmem.db import schema as t`` then ``t.messages``), so migrations and stores see one schema.
"""

from __future__ import annotations

# The modules are imported in the order their tables were always defined (metadata.tables keeps it).
# isort: off
from ._base import NAMING, metadata
from .accounts import (
    api_keys,
    knowledge_bases,
    users,
    web_sessions,
    workspace_invites,
    workspace_members,
    workspaces,
)
from .conversations import (
    agents,
    conversation_shares,
    conversations,
    message_feedback,
    messages,
    projects,
    user_feedback,
)
from .memory import (
    memories,
    memory_events,
)
from .turns import (
    conversation_compaction_leases,
    conversation_generation_leases,
    stream_events,
)
from .infrastructure import (
    account_deletions,
    embeddings,
    exports,
    import_sources,
    imports,
    jobs,
    service_leases,
    v1_prefixes,
    workers,
)
# isort: on

__all__ = [
    "NAMING",
    "account_deletions",
    "agents",
    "api_keys",
    "conversation_compaction_leases",
    "conversation_generation_leases",
    "conversation_shares",
    "conversations",
    "embeddings",
    "exports",
    "import_sources",
    "imports",
    "jobs",
    "knowledge_bases",
    "memories",
    "memory_events",
    "message_feedback",
    "messages",
    "metadata",
    "projects",
    "service_leases",
    "stream_events",
    "user_feedback",
    "users",
    "v1_prefixes",
    "web_sessions",
    "workers",
    "workspace_invites",
    "workspace_members",
    "workspaces",
]

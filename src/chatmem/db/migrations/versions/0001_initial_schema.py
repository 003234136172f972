"""Initial schema: every table of both seeds plus chatmem's own (see chatmem.db.schema).

Revision ID: 0001
Revises:
Create Date: 2026-11-30 02:53:09.785789
"""

import sqlalchemy as sa
from alembic import op

from chatmem.db.migrations.initial import accounts, conversations, memory

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # by area (chatmem/db/migrations/initial/), in the order the foreign keys need
    accounts.create()
    conversations.create()
    memory.create()


def downgrade() -> None:
    op.drop_index("idx_user_feedback_user_created", table_name="user_feedback")
    op.drop_index("idx_user_feedback_created", table_name="user_feedback")
    op.drop_index("idx_conv_workspace_updated", table_name="conversations")
    op.drop_index("idx_conv_user_updated", table_name="conversations")
    op.drop_index("idx_projects_user_name_unique", table_name="projects")

    with op.batch_alter_table("memory_events", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_events_memory")

    op.drop_table("memory_events")
    op.drop_table("user_feedback")
    with op.batch_alter_table("stream_events", schema=None) as batch_op:
        batch_op.drop_index("ix_stream_events_created")

    op.drop_table("stream_events")
    with op.batch_alter_table("message_feedback", schema=None) as batch_op:
        batch_op.drop_index("uq_message_feedback_message_user")
        batch_op.drop_index("idx_message_feedback_user_message")
        batch_op.drop_index("idx_message_feedback_updated")
        batch_op.drop_index("idx_message_feedback_rating_updated")
        batch_op.drop_index("idx_message_feedback_model_updated")
        batch_op.drop_index("idx_message_feedback_conv")

    op.drop_table("message_feedback")
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.drop_index("idx_memories_user_status")
        batch_op.drop_index("idx_memories_user_slot")
        batch_op.drop_index("idx_memories_user_agent_status")

    op.drop_table("memories")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("idx_messages_user_status")
        batch_op.drop_index("idx_messages_role_created")
        batch_op.drop_index("idx_messages_parent")
        batch_op.drop_index("idx_messages_model_role_created")
        batch_op.drop_index("idx_messages_conv_parent")
        batch_op.drop_index("idx_messages_conv_created")
        batch_op.drop_index("idx_messages_conv")

    op.drop_table("messages")
    with op.batch_alter_table("conversation_shares", schema=None) as batch_op:
        batch_op.drop_index("idx_conv_shares_user")
        batch_op.drop_index("idx_conv_shares_conv")

    op.drop_table("conversation_shares")
    with op.batch_alter_table("conversation_generation_leases", schema=None) as batch_op:
        batch_op.drop_index("idx_conversation_generation_leases_expires")

    op.drop_table("conversation_generation_leases")
    with op.batch_alter_table("conversation_compaction_leases", schema=None) as batch_op:
        batch_op.drop_index("idx_conversation_compaction_leases_expires")

    op.drop_table("conversation_compaction_leases")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_conv_agent_default",
            sqlite_where=sa.text("is_agent_default = 1"),
            postgresql_where=sa.text("is_agent_default = 1"),
        )
        batch_op.drop_index("idx_conv_user_agent")
        batch_op.drop_index("idx_conv_user")
        batch_op.drop_index("idx_conv_project")
        batch_op.drop_index("idx_conv_inline")

    op.drop_table("conversations")
    with op.batch_alter_table("workspace_members", schema=None) as batch_op:
        batch_op.drop_index("ix_workspace_members_user")

    op.drop_table("workspace_members")
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_index("idx_projects_user")

    op.drop_table("projects")
    op.drop_table("workspaces")
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_web_sessions_user")
        batch_op.drop_index("ix_web_sessions_expires")

    op.drop_table("web_sessions")
    with op.batch_alter_table("knowledge_bases", schema=None) as batch_op:
        batch_op.drop_index("ix_knowledge_bases_user")

    op.drop_table("knowledge_bases")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_api_keys_user")

    op.drop_table("api_keys")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_index("ix_agents_user")

    op.drop_table("agents")
    op.drop_table("users")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_jobs_dedupe_queued",
            sqlite_where=sa.text("status = 'queued'"),
            postgresql_where=sa.text("status = 'queued'"),
        )
        batch_op.drop_index("ix_jobs_status_run_after")

    op.drop_table("jobs")

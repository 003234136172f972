"""Initial schema: every table of both seeds plus chatmem's own (see chatmem.db.schema).

Revision ID: 0001
Revises:
Create Date: 2026-11-30 02:53:09.785789
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "jobs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
        sa.Column("dedupe_key", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), server_default=sa.text("'queued'"), nullable=False),
        sa.Column(
            "run_after", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("max_attempts", sa.Integer(), server_default=sa.text("5"), nullable=False),
        sa.Column("locked_by", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "locked_until", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.Column("last_error", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_status_run_after", ["status", "run_after"], unique=False)
        batch_op.create_index(
            "uq_jobs_dedupe_queued",
            ["dedupe_key"],
            unique=True,
            sqlite_where=sa.text("status = 'queued'"),
            postgresql_where=sa.text("status = 'queued'"),
        )

    op.create_table(
        "users",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("email", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("password_hash", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("role", sa.Text(), server_default=sa.text("'user'"), nullable=False),
        sa.Column(
            "settings",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
        sa.Column("disabled", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("email", name=op.f("uq_users_email")),
    )
    op.create_table(
        "agents",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("handle", sa.Text(), nullable=False),
        sa.Column("headline", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("description", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("story_background", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("personality_prompt", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("tone_prompt", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("guardrails_prompt", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("opening_message", sa.Text(), nullable=True),
        sa.Column("default_prompt", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("image_key", sa.Text(), nullable=True),
        sa.Column("visibility", sa.Text(), server_default=sa.text("'private'"), nullable=False),
        sa.Column("status", sa.Text(), server_default=sa.text("'published'"), nullable=False),
        sa.Column("last_assistant_message", sa.Text(), nullable=True),
        sa.Column(
            "last_assistant_message_at",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            nullable=True,
        ),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_agents_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
    )
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.create_index("ix_agents_user", ["user_id"], unique=False)

    op.create_table(
        "api_keys",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("prefix", sa.Text(), nullable=False),
        sa.Column("key_hash", sa.Text(), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "last_used_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.Column(
            "revoked_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_keys_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index("ix_api_keys_user", ["user_id"], unique=False)

    op.create_table(
        "knowledge_bases",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_knowledge_bases_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_bases")),
    )
    with op.batch_alter_table("knowledge_bases", schema=None) as batch_op:
        batch_op.create_index("ix_knowledge_bases_user", ["user_id"], unique=False)

    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("csrf_token", sa.Text(), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "expires_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_web_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
    )
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.create_index("ix_web_sessions_expires", ["expires_at"], unique=False)
        batch_op.create_index("ix_web_sessions_user", ["user_id"], unique=False)

    op.create_table(
        "workspaces",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("owner_id", sa.Text(), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_workspaces_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workspaces")),
    )
    op.create_table(
        "projects",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("instructions", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("accent", sa.Text(), server_default=sa.text("'violet'"), nullable=False),
        sa.Column("emoji", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("pinned", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("kb_id", sa.Text(), nullable=True),
        sa.Column("auto_add_uploads", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column("is_public", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.ForeignKeyConstraint(
            ["kb_id"],
            ["knowledge_bases.id"],
            name=op.f("fk_projects_kb_id_knowledge_bases"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_projects_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
    )
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.create_index("idx_projects_user", ["user_id"], unique=False)

    op.create_table(
        "workspace_members",
        sa.Column("workspace_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), server_default=sa.text("'member'"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_workspace_members_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_workspace_members_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("workspace_id", "user_id", name=op.f("pk_workspace_members")),
    )
    with op.batch_alter_table("workspace_members", schema=None) as batch_op:
        batch_op.create_index("ix_workspace_members_user", ["user_id"], unique=False)

    op.create_table(
        "conversations",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("project_id", sa.Text(), nullable=True),
        sa.Column("title", sa.Text(), server_default=sa.text("'新对话'"), nullable=False),
        sa.Column("provider", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("model_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("fast", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "kb_ids",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column("rag_mode", sa.Text(), server_default=sa.text("'auto'"), nullable=False),
        sa.Column(
            "summary_blocks",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column("active_leaf_id", sa.Text(), nullable=True),
        sa.Column(
            "provider_state",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
        sa.Column("pinned", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("archived", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("starred", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("inline_source_conv", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("inline_parent_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("inline_quote", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("is_public", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("message_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "last_message_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.Column("memory_cursor", sa.Text(), nullable=True),
        sa.Column("is_agent_default", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name=op.f("fk_conversations_agent_id_agents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_conversations_project_id_projects"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_conversations_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
    )
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.create_index("idx_conv_inline", ["inline_source_conv"], unique=False)
        batch_op.create_index("idx_conv_project", ["project_id"], unique=False)
        batch_op.create_index("idx_conv_user", ["user_id"], unique=False)
        batch_op.create_index("idx_conv_user_agent", ["user_id", "agent_id"], unique=False)
        batch_op.create_index(
            "uq_conv_agent_default",
            ["user_id", "agent_id"],
            unique=True,
            sqlite_where=sa.text("is_agent_default = 1"),
            postgresql_where=sa.text("is_agent_default = 1"),
        )

    op.create_table(
        "conversation_compaction_leases",
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("owner_token", sa.Text(), nullable=False),
        sa.Column(
            "expires_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_compaction_leases_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", name=op.f("pk_conversation_compaction_leases")),
    )
    with op.batch_alter_table("conversation_compaction_leases", schema=None) as batch_op:
        batch_op.create_index(
            "idx_conversation_compaction_leases_expires", ["expires_at"], unique=False
        )

    op.create_table(
        "conversation_generation_leases",
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("branch_key", sa.Text(), nullable=False),
        sa.Column("principal_id", sa.Text(), nullable=False),
        sa.Column("owner_token", sa.Text(), nullable=False),
        sa.Column(
            "expires_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_generation_leases_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "conversation_id",
            "branch_key",
            "principal_id",
            name=op.f("pk_conversation_generation_leases"),
        ),
    )
    with op.batch_alter_table("conversation_generation_leases", schema=None) as batch_op:
        batch_op.create_index(
            "idx_conversation_generation_leases_expires", ["expires_at"], unique=False
        )

    op.create_table(
        "conversation_shares",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "snapshot",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_shares_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_conversation_shares_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation_shares")),
    )
    with op.batch_alter_table("conversation_shares", schema=None) as batch_op:
        batch_op.create_index("idx_conv_shares_conv", ["conversation_id"], unique=True)
        batch_op.create_index("idx_conv_shares_user", ["user_id"], unique=False)

    op.create_table(
        "messages",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("parent_id", sa.Text(), nullable=True),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("model_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("model_label", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("fast", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "blocks",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column("raw", sa.Text(), nullable=True),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column(
            "attachments",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "selected_user_skill_ids",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "citations",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "input_tokens",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column(
            "context_tokens",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column(
            "output_tokens",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column(
            "cache_read_tokens",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column(
            "cache_write_tokens",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column("cost", sa.Float(precision=53), server_default=sa.text("0"), nullable=False),
        sa.Column("currency", sa.Text(), server_default=sa.text("'USD'"), nullable=False),
        sa.Column("credits", sa.Float(precision=53), server_default=sa.text("0"), nullable=False),
        sa.Column("status", sa.Text(), server_default=sa.text("'complete'"), nullable=False),
        sa.Column("error", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "gen_ms",
            sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"),
            server_default=sa.text("0"),
            nullable=False,
        ),
        sa.Column("search_text", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("verify", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column("feedback", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("author_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=True),
        sa.Column(
            "metadata",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
        sa.Column("depth", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name=op.f("fk_messages_agent_id_agents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_messages_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["parent_id"],
            ["messages.id"],
            name=op.f("fk_messages_parent_id_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_messages_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("idx_messages_conv", ["conversation_id"], unique=False)
        batch_op.create_index(
            "idx_messages_conv_created", ["conversation_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "idx_messages_conv_parent", ["conversation_id", "parent_id"], unique=False
        )
        batch_op.create_index(
            "idx_messages_model_role_created", ["model_id", "role", "created_at"], unique=False
        )
        batch_op.create_index("idx_messages_parent", ["parent_id"], unique=False)
        batch_op.create_index("idx_messages_role_created", ["role", "created_at"], unique=False)
        batch_op.create_index("idx_messages_user_status", ["user_id", "status"], unique=False)

    op.create_table(
        "memories",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("memory_text", sa.Text(), nullable=False),
        sa.Column("memory_type", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("slot", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("value", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("status", sa.Text(), server_default=sa.text("'ACTIVE'"), nullable=False),
        sa.Column(
            "confidence", sa.Float(precision=53), server_default=sa.text("(0.8)"), nullable=False
        ),
        sa.Column(
            "source_message_ids",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "supersedes",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "superseded_by",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column(
            "affected_domains",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column("reason", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "valid_from", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.Column(
            "valid_until", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=True
        ),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column("agent_id", sa.Text(), nullable=True),
        sa.Column("importance", sa.Integer(), server_default=sa.text("3"), nullable=False),
        sa.Column("source_message_id", sa.Text(), nullable=True),
        sa.Column("origin", sa.Text(), server_default=sa.text("'extracted'"), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name=op.f("fk_memories_agent_id_agents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_message_id"],
            ["messages.id"],
            name=op.f("fk_memories_source_message_id_messages"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memories_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memories")),
    )
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.create_index(
            "idx_memories_user_agent_status", ["user_id", "agent_id", "status"], unique=False
        )
        batch_op.create_index("idx_memories_user_slot", ["user_id", "slot"], unique=False)
        batch_op.create_index("idx_memories_user_status", ["user_id", "status"], unique=False)

    op.create_table(
        "message_feedback",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("model_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("channel_id", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("rating", sa.Text(), nullable=False),
        sa.Column(
            "reasons",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            server_default=sa.text("'[]'"),
            nullable=False,
        ),
        sa.Column("comment", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.Column(
            "updated_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.CheckConstraint(
            "rating IN ('like', 'dislike')", name=op.f("ck_message_feedback_rating")
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_message_feedback_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_message_feedback_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_message_feedback_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_feedback")),
    )
    with op.batch_alter_table("message_feedback", schema=None) as batch_op:
        batch_op.create_index("idx_message_feedback_conv", ["conversation_id"], unique=False)
        batch_op.create_index(
            "idx_message_feedback_model_updated", ["model_id", "updated_at"], unique=False
        )
        batch_op.create_index(
            "idx_message_feedback_rating_updated", ["rating", "updated_at"], unique=False
        )
        batch_op.create_index("idx_message_feedback_updated", ["updated_at"], unique=False)
        batch_op.create_index(
            "idx_message_feedback_user_message", ["user_id", "message_id"], unique=False
        )
        batch_op.create_index(
            "uq_message_feedback_message_user", ["message_id", "user_id"], unique=True
        )

    op.create_table(
        "stream_events",
        sa.Column("message_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column(
            "data",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_stream_events_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("message_id", "seq", name=op.f("pk_stream_events")),
    )
    with op.batch_alter_table("stream_events", schema=None) as batch_op:
        batch_op.create_index("ix_stream_events_created", ["created_at"], unique=False)

    op.create_table(
        "user_feedback",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=True),
        sa.Column("conversation_id", sa.Text(), nullable=True),
        sa.Column("conversation_title", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("page_path", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("user_agent", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("viewport_width", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("viewport_height", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("screenshot", sa.LargeBinary(), nullable=True),
        sa.Column("screenshot_mime", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column("screenshot_width", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("screenshot_height", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_user_feedback_conversation_id_conversations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_user_feedback_message_id_messages"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_feedback_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_feedback")),
    )
    op.create_table(
        "memory_events",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("memory_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "before",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "after",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("reason", sa.Text(), server_default=sa.text("('')"), nullable=False),
        sa.Column(
            "created_at", sa.BigInteger().with_variant(sa.INTEGER(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_memory_events_memory_id_memories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_memory_events_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_events")),
    )
    with op.batch_alter_table("memory_events", schema=None) as batch_op:
        batch_op.create_index("ix_memory_events_memory", ["memory_id", "created_at"], unique=False)

    # Expression indexes (autogenerate cannot reflect them on SQLite, so they are written here).
    op.create_index(
        "idx_projects_user_name_unique",
        "projects",
        ["user_id", sa.text("coalesce(workspace_id, '')"), sa.text("lower(trim(name))")],
        unique=True,
    )
    op.create_index(
        "idx_conv_user_updated",
        "conversations",
        ["user_id", "archived", sa.text("pinned DESC"), sa.text("updated_at DESC")],
    )
    op.create_index(
        "idx_conv_workspace_updated",
        "conversations",
        ["workspace_id", "archived", sa.text("pinned DESC"), sa.text("updated_at DESC")],
    )
    op.create_index(
        "idx_user_feedback_created",
        "user_feedback",
        [sa.text("created_at DESC"), sa.text("id DESC")],
    )
    op.create_index(
        "idx_user_feedback_user_created", "user_feedback", ["user_id", sa.text("created_at DESC")]
    )


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

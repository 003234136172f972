"""Migration 0001, step 2: conversations, their leases and shares, and messages."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql


def create() -> None:
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

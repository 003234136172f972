"""Migration 0001, step 3: memories, message and user feedback, stream events, memory events,
and the indexes created last."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql


def create() -> None:
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

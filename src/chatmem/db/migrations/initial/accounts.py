"""Migration 0001, step 1: jobs, users and what belongs to them (agents, API keys, knowledge
bases, web sessions), workspaces, projects and workspace members."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql


def create() -> None:
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

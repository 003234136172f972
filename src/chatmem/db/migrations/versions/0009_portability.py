"""Portability: imports, their provenance, data exports and the account-deletion audit.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")
JSONDoc = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


def _txt(name, default=""):
    return sa.Column(name, sa.Text(), nullable=False, server_default=sa.text(f"'{default}'"))


def _num(name, type_=Millis, default=0):
    return sa.Column(name, type_, nullable=False, server_default=sa.text(str(default)))


def _json(name, default="{}"):
    return sa.Column(name, JSONDoc, nullable=False, server_default=sa.text(f"'{default}'"))


def _user_fk(table):
    return sa.ForeignKeyConstraint(
        ["user_id"], ["users.id"], name=f"fk_{table}_user_id_users", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "imports",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        _txt("format"),
        _txt("requested_format", "auto"),
        _txt("filename"),
        _txt("status", "queued"),
        _num("dry_run", sa.Integer()),
        _txt("path"),
        _num("owns_file", sa.Integer(), 1),
        _num("bytes_total"),
        _num("bytes_read"),
        _num("items_done"),
        _json("report"),
        _txt("error"),
        sa.Column("created_at", Millis, nullable=False),
        sa.Column("updated_at", Millis, nullable=False),
        sa.Column("finished_at", Millis, nullable=True),
        _user_fk("imports"),
        sa.PrimaryKeyConstraint("id", name="pk_imports"),
    )
    op.create_index("idx_imports_user_created", "imports", ["user_id", "created_at"])
    op.create_table(
        "import_sources",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=False),
        _txt("import_id"),
        sa.Column("created_at", Millis, nullable=False),
        _user_fk("import_sources"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_import_sources_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "source", "source_id", name="pk_import_sources"),
    )
    op.create_index("idx_import_sources_conversation", "import_sources", ["conversation_id"])
    op.create_table(
        "exports",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        _txt("status", "queued"),
        _txt("path"),
        _num("size_bytes"),
        _json("counts"),
        _txt("error"),
        sa.Column("created_at", Millis, nullable=False),
        sa.Column("updated_at", Millis, nullable=False),
        sa.Column("expires_at", Millis, nullable=True),
        _user_fk("exports"),
        sa.PrimaryKeyConstraint("id", name="pk_exports"),
    )
    op.create_index("idx_exports_user_created", "exports", ["user_id", "created_at"])
    op.create_table(
        "account_deletions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        _txt("actor_id"),
        _json("counts"),
        sa.Column("created_at", Millis, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_account_deletions"),
    )
    op.create_index("idx_account_deletions_created", "account_deletions", ["created_at"])


def downgrade() -> None:
    op.drop_index("idx_account_deletions_created", table_name="account_deletions")
    op.drop_table("account_deletions")
    op.drop_index("idx_exports_user_created", table_name="exports")
    op.drop_table("exports")
    op.drop_index("idx_import_sources_conversation", table_name="import_sources")
    op.drop_table("import_sources")
    op.drop_index("idx_imports_user_created", table_name="imports")
    op.drop_table("imports")

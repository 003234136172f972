"""The OpenAI-compatible door's conversation matching: ``v1_prefixes``.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "v1_prefixes",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("prefix_hash", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=False),
        sa.Column("created_at", Millis, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_v1_prefixes_user_id_users", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_v1_prefixes_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_v1_prefixes_message_id_messages",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "prefix_hash", name="pk_v1_prefixes"),
    )
    op.create_index("idx_v1_prefixes_message", "v1_prefixes", ["message_id"])
    op.create_index("idx_v1_prefixes_conversation", "v1_prefixes", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("idx_v1_prefixes_conversation", table_name="v1_prefixes")
    op.drop_index("idx_v1_prefixes_message", table_name="v1_prefixes")
    op.drop_table("v1_prefixes")

"""Job workers' heartbeats: ``workers`` (readiness and the workers-alive metric).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")
JSONDoc = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("host", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("kinds", JSONDoc, server_default=sa.text("'[]'"), nullable=False),
        sa.Column("started_at", Millis, nullable=False),
        sa.Column("seen_at", Millis, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_workers"),
    )
    op.create_index("idx_workers_seen_at", "workers", ["seen_at"])


def downgrade() -> None:
    op.drop_index("idx_workers_seen_at", table_name="workers")
    op.drop_table("workers")

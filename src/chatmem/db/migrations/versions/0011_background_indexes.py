"""Background work driven by indexes: the sweeper, event pruning and job reaping.

- ``idx_messages_streaming``: a partial index on the rows still streaming, so the sweeper's scan
  costs what the running turns cost, not what the history weighs (it was a scan of every message
  on SQLite, every few seconds, in every process);
- ``ix_stream_events_created`` gains ``(message_id, seq)``: pruning walks the oldest rows by this
  key in small batches, each its own short transaction;
- ``ix_jobs_status_updated``: old finished jobs are deleted in batches by this index;
- ``service_leases``: one row per deployment-wide duty (pruning, reaping), held by one process.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")
STREAMING = sa.text("status = 'streaming'")


def upgrade() -> None:
    op.create_index(
        "idx_messages_streaming",
        "messages",
        ["created_at"],
        sqlite_where=STREAMING,
        postgresql_where=STREAMING,
    )
    op.drop_index("ix_stream_events_created", table_name="stream_events")
    op.create_index(
        "ix_stream_events_created", "stream_events", ["created_at", "message_id", "seq"]
    )
    op.create_index("ix_jobs_status_updated", "jobs", ["status", "updated_at"])
    op.create_table(
        "service_leases",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("holder", sa.Text(), nullable=False),
        sa.Column("expires_at", Millis, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_service_leases"),
    )


def downgrade() -> None:
    op.drop_table("service_leases")
    op.drop_index("ix_jobs_status_updated", table_name="jobs")
    op.drop_index("ix_stream_events_created", table_name="stream_events")
    op.create_index("ix_stream_events_created", "stream_events", ["created_at"])
    op.drop_index("idx_messages_streaming", table_name="messages")

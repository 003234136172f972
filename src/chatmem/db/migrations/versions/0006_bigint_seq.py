"""64-bit sequences and counters: stream_events.seq, messages.depth, conversations.message_count.

They were 32-bit INTEGER on PostgreSQL, so a ``Last-Event-ID`` (or a /rpc cursor depth) of 2^31
or more failed inside the database (a 500, or a stream cut after its 200). Every other integer
column is either already BIGINT (times, token counts) or bounded far below 2^31 by validation
(importance 1–5, job attempts, screenshot and viewport sizes, embedding dimensions). SQLite's
INTEGER is 64-bit already: nothing to do there.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS = (("stream_events", "seq"), ("messages", "depth"), ("conversations", "message_count"))


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.alter_column(table, column, type_=sa.BigInteger(), existing_nullable=False)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.alter_column(table, column, type_=sa.Integer(), existing_nullable=False)

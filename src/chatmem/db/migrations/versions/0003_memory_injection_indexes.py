"""Indexes for memory injection: top rows of a status by (importance, updated_at), constraints by type.

Choosing a turn's memories reads the best rows of one user and status in a fixed order and the
user's constraints separately; these indexes make both reads cost the same for 100 and 10,000
memories (bench/memory.py).

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "idx_memories_inject", "memories", ["user_id", "status", "importance", "updated_at"]
    )
    op.create_index(
        "idx_memories_user_type_status", "memories", ["user_id", "memory_type", "status"]
    )


def downgrade() -> None:
    op.drop_index("idx_memories_user_type_status", table_name="memories")
    op.drop_index("idx_memories_inject", table_name="memories")

"""Workspace shared memory (issue 16): ``memories.workspace_id`` ('' = personal memory).

Plain ``ADD COLUMN`` (no batch copy): SQLite's full-text and embedding triggers on ``memories``
(migrations 0002, 0005) would not survive a table rebuild.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "memories",
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("''"), nullable=False),
    )
    op.create_index(
        "idx_memories_workspace",
        "memories",
        ["workspace_id", "status", "importance", "updated_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("idx_memories_workspace", table_name="memories")
    op.execute("ALTER TABLE memories DROP COLUMN workspace_id")

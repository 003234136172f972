"""Problem reports carry the conversation's workspace (issue 16): ``user_feedback.workspace_id``.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ALTER TABLE … ADD COLUMN on both databases (SQLite adds a NOT NULL column with a
    # constant default in place): a batch operation would reflect the table and the tables its
    # keys refer to, and SQLite's reflection warns on every fresh migrate that it skips
    # ``projects``' expression index (tests/test_schema.py: a migration warns nothing).
    op.add_column(
        "user_feedback",
        sa.Column("workspace_id", sa.Text(), server_default=sa.text("''"), nullable=False),
    )


def downgrade() -> None:
    with op.batch_alter_table("user_feedback") as batch_op:
        batch_op.drop_column("workspace_id")

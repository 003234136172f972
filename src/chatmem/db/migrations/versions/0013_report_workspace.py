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
    with op.batch_alter_table("user_feedback") as batch_op:
        batch_op.add_column(
            sa.Column("workspace_id", sa.Text(), server_default=sa.text("''"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("user_feedback") as batch_op:
        batch_op.drop_column("workspace_id")

"""Drop ``idx_messages_conv`` (messages.conversation_id): two other indexes lead with the column.

Why: ``idx_messages_conv_created`` (conversation_id, created_at) and ``idx_messages_conv_parent``
(conversation_id, parent_id) serve every lookup by conversation — the planners of both databases
use a composite index's prefix, and the foreign key's cascades find the rows through it. The
single-column index only cost a B-tree insert for every message written (issue 18: a fork of
10,000 messages pays it 10,000 times, as does every append and import).

Revision ID: 0020
Revises: 0019
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("idx_messages_conv", table_name="messages")


def downgrade() -> None:
    op.create_index("idx_messages_conv", "messages", ["conversation_id"], unique=False)

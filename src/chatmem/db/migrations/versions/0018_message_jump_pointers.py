"""Messages carry a skew-binary jump pointer: switching branch near the root stops walking the tree.

Why (issue 18): switching to a message returns the newest leaf of its subtree, and finding it
walked the whole subtree — 10,000 index probes for a message near the root of a 10,000-deep path.
Now the conversation's leaves are read newest first and each is tested for "has the target as
ancestor" by a level-ancestor walk over these pointers: O(log depth) lookups per tested leaf
(``conversations/dag.jump_for``, ``conversations/store.newest_descendant``).

``jump_id`` is an ancestor of the message (soft reference, no FK) and ``jump_depth`` that
ancestor's depth; NULL means "the message itself" (a root). Rows written before this migration
keep NULL: a walk through them steps parent by parent, as before; everything written afterwards
builds its pointer from its parent's (appends, ``dag.fill_jumps`` for imports and shared copies,
a fork remaps the source's), so the cost falls back to the old walk only across old rows.
Nothing is backfilled (a rewrite of every message).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")


def upgrade() -> None:
    # plain ADD COLUMN on both (no batch copy of the table: its triggers and FTS stay as they are)
    op.add_column("messages", sa.Column("jump_id", sa.Text(), nullable=True))
    op.add_column("messages", sa.Column("jump_depth", Millis, nullable=True))


def downgrade() -> None:
    op.drop_column("messages", "jump_depth")
    op.drop_column("messages", "jump_id")

"""A fork answers before its copy: ``conversations.fork_source_id`` and ``fork_plan``.

Why (issue 18, "a fork of 10,000 messages in ≤ 0.2 s"): a fork copies the source's path into
its own rows (the tree must be the fork's own: it is edited, rated, shared and deleted apart from
the source). On PostgreSQL the copy of 10,000 messages is 0.6–0.9 s of index and foreign-key work
that no statement shape removes (``bench/fork_floor.py``: the rows with their primary key alone
are 0.17–0.24 s). So the fork now writes the new conversation with everything its first answer
needs (counters, leaf, title) and the plan of its copy — the source, the path's top, the
block of ids the copies take — and the copy runs right after it commits
(``conversations/forks.py``). Until then the conversation is "pending":

- ``fork_source_id``: the source conversation (NULL once copied, and for every other
  conversation). A foreign key without a cascade: the source cannot be deleted under a pending
  fork by any path (every deleting path settles the forks of what it deletes first; the key is
  there so that a path that forgets fails instead of losing the fork's history).
- ``fork_plan``: the copy's plan (JSON text, ``conversations/fork_store.ForkPlan``); NULL once copied.

A partial index on ``fork_source_id`` finds a source's pending forks (none, nearly always) and the
pending forks the sweeper settles after a crash. Nothing is backfilled: every existing conversation
is complete. SQLite: a plain ADD COLUMN (a column with a REFERENCES clause and a NULL default is
allowed there).

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # alembic's add_column would issue the foreign key as a separate ALTER (unsupported)
        op.execute(
            "ALTER TABLE conversations ADD COLUMN fork_source_id TEXT REFERENCES conversations (id)"
        )
    else:
        op.add_column(
            "conversations",
            sa.Column(
                "fork_source_id",
                sa.Text(),
                sa.ForeignKey("conversations.id", name="conversations_fork_source_id_fkey"),
                nullable=True,
            ),
        )
    op.add_column("conversations", sa.Column("fork_plan", sa.Text(), nullable=True))
    op.create_index(
        "idx_conv_fork_source",
        "conversations",
        ["fork_source_id"],
        sqlite_where=sa.text("fork_source_id IS NOT NULL"),
        postgresql_where=sa.text("fork_source_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("idx_conv_fork_source", table_name="conversations")
    op.drop_column("conversations", "fork_plan")
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE conversations DROP COLUMN fork_source_id")
    else:
        op.drop_column("conversations", "fork_source_id")

"""PostgreSQL: the full-text GIN indexes write entries straight into the index (``fastupdate = off``).

Why: with GIN's default pending list, recently written rows sit in an unsorted list that every
query scans linearly until VACUUM merges it. Measured on 20,000 freshly written messages, a
conversation's per-term count and candidate queries took 28–37 ms and 32–42 ms with the pending
list and 5–9 ms and 4–17 ms after VACUUM — and a chat server reads the rows it just wrote (recall
runs on every turn over messages appended seconds ago). Without the list each insert updates the
index itself (a few dozen entries per message), a small constant on the write path and no merge
spikes. The pending list there is merged now. SQLite (FTS5) is unaffected.

Revision ID: 0015
Revises: 0014
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

INDEXES = ("idx_messages_fts", "idx_memories_fts")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in INDEXES:
        op.execute(f"ALTER INDEX {name} SET (fastupdate = off)")
        op.execute(f"SELECT gin_clean_pending_list('{name}'::regclass)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in INDEXES:
        op.execute(f"ALTER INDEX {name} RESET (fastupdate)")

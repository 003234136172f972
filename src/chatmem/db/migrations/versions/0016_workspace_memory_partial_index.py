"""The workspace-memory index covers workspace rows only (``WHERE workspace_id <> ''``).

Why: migration 0014's ``idx_memories_workspace`` (workspace_id, status, …) also held every
personal memory under ``workspace_id = ''``, and SQLite's planner chose it for a personal read
(``user_id = ? AND workspace_id = '' AND status = ?``) — a walk over every user's memories, found
by ``tests/test_query_plans.py`` with other users' rows present. As a partial index it holds
only workspace memories; workspace reads state the same predicate (``memory/store.IN_WORKSPACE``).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

COLUMNS = ["workspace_id", "status", "importance", "updated_at"]


def upgrade() -> None:
    op.drop_index("idx_memories_workspace", table_name="memories")
    where = sa.text("workspace_id <> ''")
    op.create_index(
        "idx_memories_workspace",
        "memories",
        COLUMNS,
        unique=False,
        sqlite_where=where,
        postgresql_where=where,
    )


def downgrade() -> None:
    op.drop_index("idx_memories_workspace", table_name="memories")
    op.create_index("idx_memories_workspace", "memories", COLUMNS, unique=False)

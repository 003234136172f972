"""Full-text search over memories: FTS5 on SQLite, a tsvector GIN index on PostgreSQL.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # A self-contained FTS5 table keyed by memory id (not rowid-linked external content, whose
        # rowids VACUUM may renumber on a table with a TEXT primary key).
        op.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5("
            "memory_text, memory_id UNINDEXED, tokenize='unicode61')"
        )
        op.execute(
            "CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN "
            "INSERT INTO memories_fts(memory_text, memory_id) VALUES (new.memory_text, new.id); END"
        )
        op.execute(
            "CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN "
            "DELETE FROM memories_fts WHERE memory_id = old.id; END"
        )
        op.execute(
            "CREATE TRIGGER memories_fts_au AFTER UPDATE OF memory_text ON memories BEGIN "
            "UPDATE memories_fts SET memory_text = new.memory_text WHERE memory_id = old.id; END"
        )
    else:
        op.execute(
            "CREATE INDEX idx_memories_fts ON memories "
            "USING GIN (to_tsvector('simple', memory_text))"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trig in ("memories_fts_au", "memories_fts_ad", "memories_fts_ai"):
            op.execute(f"DROP TRIGGER IF EXISTS {trig}")
        op.execute("DROP TABLE IF EXISTS memories_fts")
    else:
        op.execute("DROP INDEX IF EXISTS idx_memories_fts")

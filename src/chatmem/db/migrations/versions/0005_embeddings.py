"""Embeddings: one portable table of message and memory vectors, and the triggers that drop stale ones.

Vectors are float32 bytes (BLOB / BYTEA), one row per (owner, model key). Foreign keys delete a
vector with its message, memory, conversation or user. Triggers delete a message's vectors when
its text (``search_text``) changes, and a memory's when its text changes or its status leaves
ACTIVE/QUERY_DEPENDENT, so search never sees a vector of text that is no longer there; the
embedding job computes the new ones.

Revision ID: 0005
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None

Millis = sa.BigInteger().with_variant(sa.INTEGER(), "sqlite")
INJECTABLE = "('ACTIVE', 'QUERY_DEPENDENT')"


def upgrade() -> None:
    op.create_table(
        "embeddings",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("owner_kind", sa.Text(), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=True),
        sa.Column("memory_id", sa.Text(), nullable=True),
        sa.Column("conversation_id", sa.Text(), nullable=True),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("text_hash", sa.Text(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", Millis, nullable=False),
        sa.CheckConstraint(
            "(owner_kind = 'message' AND message_id IS NOT NULL AND memory_id IS NULL) OR "
            "(owner_kind = 'memory' AND memory_id IS NOT NULL AND message_id IS NULL)",
            name=op.f("ck_embeddings_owner"),
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_embeddings_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_embeddings_memory_id_memories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_embeddings_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_embeddings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_embeddings")),
    )
    op.create_index(
        "uq_embeddings_message_model", "embeddings", ["message_id", "model"], unique=True
    )
    op.create_index("uq_embeddings_memory_model", "embeddings", ["memory_id", "model"], unique=True)
    op.create_index(
        "idx_embeddings_user_scope",
        "embeddings",
        ["user_id", "owner_kind", "model", "conversation_id", "id"],
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER embeddings_message_text AFTER UPDATE OF search_text ON messages "
            "WHEN old.search_text IS NOT new.search_text BEGIN "
            "DELETE FROM embeddings WHERE message_id = new.id; END"
        )
        op.execute(
            "CREATE TRIGGER embeddings_memory_text AFTER UPDATE OF memory_text, status ON memories "
            f"WHEN old.memory_text IS NOT new.memory_text OR new.status NOT IN {INJECTABLE} BEGIN "
            "DELETE FROM embeddings WHERE memory_id = new.id; END"
        )
        return
    op.execute(
        "CREATE FUNCTION embeddings_forget_message() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN DELETE FROM embeddings WHERE message_id = NEW.id; RETURN NULL; END $$"
    )
    op.execute(
        "CREATE FUNCTION embeddings_forget_memory() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN DELETE FROM embeddings WHERE memory_id = NEW.id; RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER embeddings_message_text AFTER UPDATE OF search_text ON messages "
        "FOR EACH ROW WHEN (OLD.search_text IS DISTINCT FROM NEW.search_text) "
        "EXECUTE FUNCTION embeddings_forget_message()"
    )
    op.execute(
        "CREATE TRIGGER embeddings_memory_text AFTER UPDATE OF memory_text, status ON memories "
        "FOR EACH ROW WHEN (OLD.memory_text IS DISTINCT FROM NEW.memory_text "
        f"OR NEW.status NOT IN {INJECTABLE}) EXECUTE FUNCTION embeddings_forget_memory()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS embeddings_message_text" + _on("messages"))
    op.execute("DROP TRIGGER IF EXISTS embeddings_memory_text" + _on("memories"))
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION IF EXISTS embeddings_forget_message()")
        op.execute("DROP FUNCTION IF EXISTS embeddings_forget_memory()")
    op.drop_index("idx_embeddings_user_scope", table_name="embeddings")
    op.drop_index("uq_embeddings_memory_model", table_name="embeddings")
    op.drop_index("uq_embeddings_message_model", table_name="embeddings")
    op.drop_table("embeddings")


def _on(table: str) -> str:
    return "" if op.get_bind().dialect.name == "sqlite" else f" ON {table}"

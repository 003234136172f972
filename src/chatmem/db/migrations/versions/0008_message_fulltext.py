"""Full-text index over messages: what search and recall query instead of scanning with LIKE.

A message is indexed once it has visible text and is no longer streaming (a running answer is
flushed every 250 ms; re-indexing each flush would cost more than the answer). Each index row
carries three fields: the text, its CJK terms (``search/terms.py``: characters and bigrams, so
Chinese words are findable) and scope tokens — the user, the conversation and the agent (or
``noagent``) — so "this conversation" and "this user" are index lookups, not post-filters.

SQLite: a contentless FTS5 table (it stores no second copy of the text) whose rowids come from
``messages_fts_ids`` (an INTEGER PRIMARY KEY keeps them stable under VACUUM, which may renumber the
implicit rowids of ``messages``). Triggers keep it in the same transaction as every write;
deleting an entry re-supplies the indexed values, which ``chatmem_cjk_terms`` — a deterministic
SQL function registered on every connection — recomputes exactly.

PostgreSQL: a stored generated ``tsvector`` column with a GIN index, and ``chatmem_cjk_terms`` as an
immutable SQL function equivalent to the Python one. The text-search configuration of the text part
is ``CHATMEM_SEARCH_CONFIG`` at migration time (``simple`` by default, which neither stems nor drops
words, so non-English text is not mangled); queries use the same setting (start-up checks the
two agree: ``search/config_check.py``).

Existing rows are indexed by the migration itself.

Revision ID: 0008
Revises: 0007
"""

import os
import re

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

CJK_CLASS = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def _scope(row: str) -> str:
    return (
        f"lower(replace({row}.user_id, '_', '')) || ' ' || "
        f"lower(replace({row}.conversation_id, '_', '')) || ' ' || "
        f"coalesce(lower(replace({row}.agent_id, '_', '')), 'noagent')"
    )


def _indexable(row: str) -> str:
    return f"{row}.search_text != '' AND {row}.status != 'streaming'"


def _sqlite_delete(row: str) -> str:
    return (
        "INSERT INTO messages_fts(messages_fts, rowid, body, cjk, scope) "
        f"SELECT 'delete', rid, {row}.search_text, chatmem_cjk_terms({row}.search_text), "
        f"{_scope(row)} FROM messages_fts_ids WHERE message_id = {row}.id; "
        f"DELETE FROM messages_fts_ids WHERE message_id = {row}.id;"
    )


def _sqlite_insert(row: str) -> str:
    return (
        f"INSERT INTO messages_fts_ids(message_id) SELECT {row}.id WHERE {_indexable(row)}; "
        "INSERT INTO messages_fts(rowid, body, cjk, scope) "
        f"SELECT last_insert_rowid(), {row}.search_text, chatmem_cjk_terms({row}.search_text), "
        f"{_scope(row)} WHERE {_indexable(row)};"
    )


def _upgrade_sqlite() -> None:
    op.execute(
        "CREATE TABLE messages_fts_ids (rid INTEGER PRIMARY KEY, message_id TEXT NOT NULL UNIQUE)"
    )
    op.execute(
        "CREATE VIRTUAL TABLE messages_fts USING fts5(body, cjk, scope, content='', "
        "tokenize='unicode61 remove_diacritics 0')"
    )
    op.execute(
        f"CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN {_sqlite_insert('new')} END"
    )
    op.execute(
        f"CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN {_sqlite_delete('old')} END"
    )
    op.execute(
        "CREATE TRIGGER messages_fts_au AFTER UPDATE OF search_text, status, user_id, "
        "conversation_id, agent_id ON messages WHEN old.search_text IS NOT new.search_text "
        "OR old.status IS NOT new.status OR old.user_id IS NOT new.user_id "
        "OR old.conversation_id IS NOT new.conversation_id OR old.agent_id IS NOT new.agent_id "
        "BEGIN "
        f"{_sqlite_delete('old')} {_sqlite_insert('new')} END"
    )
    # backfill, oldest first (rowid order is "newest last", which search uses to bound its reads)
    op.execute(
        "INSERT INTO messages_fts_ids(message_id) SELECT m.id FROM messages m "
        f"WHERE {_indexable('m')} ORDER BY m.created_at, m.id"
    )
    op.execute(
        "INSERT INTO messages_fts(rowid, body, cjk, scope) "
        f"SELECT i.rid, m.search_text, chatmem_cjk_terms(m.search_text), {_scope('m')} "
        "FROM messages_fts_ids i JOIN messages m ON m.id = i.message_id"
    )


PG_CJK_FUNCTION = f"""
CREATE OR REPLACE FUNCTION chatmem_cjk_terms(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
SELECT coalesce(string_agg(substr(r.run, g.pos, l.len), ' ' ORDER BY r.n, g.pos, l.len), '')
FROM (
    SELECT m.a[1] AS run, row_number() OVER () AS n
    FROM regexp_matches(t, '[{CJK_CLASS}]+', 'g') AS m(a)
) r
CROSS JOIN LATERAL generate_series(1, char_length(r.run)) AS g(pos)
CROSS JOIN (VALUES (1), (2)) AS l(len)
WHERE l.len = 1 OR g.pos < char_length(r.run)
$fn$
"""


def search_config() -> str:
    cfg = os.environ.get("CHATMEM_SEARCH_CONFIG", "simple").strip() or "simple"
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", cfg):
        raise ValueError(f"CHATMEM_SEARCH_CONFIG must be a text search configuration name: {cfg!r}")
    return cfg


def _upgrade_postgres() -> None:
    op.execute(PG_CJK_FUNCTION)
    cfg = search_config()
    op.execute(
        "ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS ("
        "CASE WHEN search_text = '' OR status = 'streaming' THEN NULL ELSE "
        f"to_tsvector('{cfg}'::regconfig, search_text) "
        "|| to_tsvector('simple'::regconfig, chatmem_cjk_terms(search_text)) "
        "|| array_to_tsvector(ARRAY[lower(replace(user_id, '_', '')), "
        "lower(replace(conversation_id, '_', '')), "
        "coalesce(lower(replace(agent_id, '_', '')), 'noagent')]) END) STORED"
    )
    op.execute("CREATE INDEX idx_messages_fts ON messages USING GIN (search_tsv)")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _upgrade_sqlite()
    else:
        _upgrade_postgres()


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trig in ("messages_fts_au", "messages_fts_ad", "messages_fts_ai"):
            op.execute(f"DROP TRIGGER IF EXISTS {trig}")
        op.execute("DROP TABLE IF EXISTS messages_fts")
        op.execute("DROP TABLE IF EXISTS messages_fts_ids")
    else:
        op.execute("DROP INDEX IF EXISTS idx_messages_fts")
        op.execute("ALTER TABLE messages DROP COLUMN IF EXISTS search_tsv")
        op.execute("DROP FUNCTION IF EXISTS chatmem_cjk_terms(text)")

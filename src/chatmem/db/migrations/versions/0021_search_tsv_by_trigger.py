"""PostgreSQL: ``messages.search_tsv`` is a plain column kept by a trigger, so a fork copies it.

Why (issue 18): migration 0008 made ``search_tsv`` a stored generated column, so every row written
to ``messages`` parses its text with ``to_tsvector`` — a fork of 10,000 messages re-parsed 10,000
texts it already had the vectors of (about 50 µs a row for a 760-character message on this
machine: ~0.5 s of a realistic fork; ~10 % of bench/scale.py's fork, whose texts are tiny).

Now the value is the same expression, in three SQL functions created here:

- ``chatmem_search_scope(user_id, conversation_id, agent_id)``: the scope part, the three scope
  tokens (no positions);
- ``chatmem_search_tsv(search_text, status, user_id, conversation_id, agent_id)``: the whole
  value, with the text-search configuration the generated column had (read from its expression,
  so a deployment keeps its ``CHATMEM_SEARCH_CONFIG``; ``search/config_store.py`` reads it back
  from this function's source);
- the trigger function ``chatmem_messages_search_tsv()`` that sets ``NEW.search_tsv``.

Two BEFORE triggers call it: on INSERT when ``search_tsv`` is NULL (every writer but the fork
leaves it out), on UPDATE when one of its inputs — or the column itself — changed (the generated
column was recomputed on every UPDATE of the row, even of an unrelated column). Their ``WHEN``
conditions are evaluated without entering PL/pgSQL, so a row that supplies its vector costs
nothing more. A writer may supply ``search_tsv`` only when it is exactly what
``chatmem_search_tsv`` gives for the row: the fork (``conversations/tree_store.copy_path``) takes
its source's vector less the entries without positions — exactly the scope tokens that do not
also occur in the text: the text parts' lexemes always carry positions — plus the copy's own
scope. ``tests/test_search_index.py`` recomputes the copies' vectors and compares.

Existing values are kept as they are (``DROP EXPRESSION`` rewrites nothing); the GIN index is
untouched. Downgrade restores the generated column (a rewrite of the table) and its index.
SQLite is untouched: its FTS5 triggers already take the copies' rows as they are inserted.

Revision ID: 0021
Revises: 0020
"""

import importlib
import re

from alembic import op
from sqlalchemy import text

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

_m0008 = importlib.import_module("chatmem.db.migrations.versions.0008_message_fulltext")

#: the configuration of the text part in 0008's column expression or in this one's function
_TEXT_PART = re.compile(r"to_tsvector\('((?:[^']|'')+)'::regconfig,\s*search_text\)")
_INPUTS = ("search_text", "status", "user_id", "conversation_id", "agent_id")

SCOPE_FUNCTION = """
CREATE FUNCTION chatmem_search_scope(user_id text, conversation_id text, agent_id text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT array_to_tsvector(ARRAY[lower(replace(user_id, '_', '')),
    lower(replace(conversation_id, '_', '')), coalesce(lower(replace(agent_id, '_', '')), 'noagent')])
$fn$
"""


def tsv_function(cfg: str) -> str:
    """``chatmem_search_tsv``: the generated column's expression of 0008 (text, CJK terms, scope)."""
    return f"""
CREATE FUNCTION chatmem_search_tsv(search_text text, status text, user_id text,
    conversation_id text, agent_id text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT CASE WHEN search_text = '' OR status = 'streaming' THEN NULL ELSE
    to_tsvector('{cfg}'::regconfig, search_text)
    || to_tsvector('simple'::regconfig, chatmem_cjk_terms(search_text))
    || chatmem_search_scope(user_id, conversation_id, agent_id) END
$fn$
"""


TRIGGER_FUNCTION = f"""
CREATE FUNCTION chatmem_messages_search_tsv() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    NEW.search_tsv := chatmem_search_tsv({", ".join(f"NEW.{k}" for k in _INPUTS)});
    RETURN NEW;
END
$fn$
"""

_CHANGED = " OR ".join(f"NEW.{k} IS DISTINCT FROM OLD.{k}" for k in (*_INPUTS, "search_tsv"))
TRIGGERS = (
    "CREATE TRIGGER messages_search_tsv_insert BEFORE INSERT ON messages FOR EACH ROW "
    "WHEN (NEW.search_tsv IS NULL) EXECUTE FUNCTION chatmem_messages_search_tsv()",
    "CREATE TRIGGER messages_search_tsv_update BEFORE UPDATE ON messages FOR EACH ROW "
    f"WHEN ({_CHANGED}) EXECUTE FUNCTION chatmem_messages_search_tsv()",
)

_COLUMN_EXPRESSION = (
    "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d "
    "JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
    "WHERE d.adrelid = to_regclass('messages') AND a.attname = 'search_tsv'"
)
_FUNCTION_SOURCE = (
    "SELECT prosrc FROM pg_proc "
    "WHERE oid = to_regprocedure('chatmem_search_tsv(text, text, text, text, text)')"
)


def _config(query: str) -> str:
    """The configuration the index was built with (found in ``query``'s text), else the setting."""
    found = op.get_bind().execute(text(query)).scalar()
    m = _TEXT_PART.search(found or "")
    return m.group(1).replace("''", "'") if m else _m0008.search_config()


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    cfg = _config(_COLUMN_EXPRESSION)
    op.execute("ALTER TABLE messages ALTER COLUMN search_tsv DROP EXPRESSION")
    op.execute(SCOPE_FUNCTION)
    op.execute(tsv_function(cfg))
    op.execute(TRIGGER_FUNCTION)
    for trigger in TRIGGERS:
        op.execute(trigger)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    cfg = _config(_FUNCTION_SOURCE)
    op.execute("DROP TRIGGER IF EXISTS messages_search_tsv_update ON messages")
    op.execute("DROP TRIGGER IF EXISTS messages_search_tsv_insert ON messages")
    op.execute("DROP FUNCTION IF EXISTS chatmem_messages_search_tsv()")
    op.execute("DROP FUNCTION IF EXISTS chatmem_search_tsv(text, text, text, text, text)")
    op.execute("DROP FUNCTION IF EXISTS chatmem_search_scope(text, text, text)")
    op.execute("DROP INDEX IF EXISTS idx_messages_fts")
    op.execute("ALTER TABLE messages DROP COLUMN search_tsv")
    # 0008's column (with the configuration it had) and index, with 0015's storage parameter
    op.execute(
        "ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS ("
        "CASE WHEN search_text = '' OR status = 'streaming' THEN NULL ELSE "
        f"to_tsvector('{cfg}'::regconfig, search_text) "
        "|| to_tsvector('simple'::regconfig, chatmem_cjk_terms(search_text)) "
        "|| array_to_tsvector(ARRAY[lower(replace(user_id, '_', '')), "
        "lower(replace(conversation_id, '_', '')), "
        "coalesce(lower(replace(agent_id, '_', '')), 'noagent')]) END) STORED"
    )
    op.execute(
        "CREATE INDEX idx_messages_fts ON messages USING GIN (search_tsv) WITH (fastupdate = off)"
    )

"""Which text search configuration the PostgreSQL message index was built with (its catalog).

Migration 0008 bakes ``CHATMEM_SEARCH_CONFIG`` into ``messages.search_tsv``; queries use
``Settings.search_config``. Where it is baked is the one source of truth (nothing else records the
value, and nothing can drift from it): since migration 0021 the source of the SQL function
``chatmem_search_tsv`` that the column's trigger calls, before it the expression of the stored
generated column (``pg_attrdef``) — a database not migrated yet is checked too. This reads it back
and takes the configuration of the text part — ``to_tsvector('<config>'::regconfig,
search_text)``; the CJK part is always ``simple``. ``config_check.py`` compares it with the setting
at start-up."""

from __future__ import annotations

import re

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_EXPRESSION = text(
    "SELECT coalesce((SELECT prosrc FROM pg_proc "
    "WHERE oid = to_regprocedure('chatmem_search_tsv(text, text, text, text, text)')), "
    "(SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d "
    "JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
    "WHERE d.adrelid = to_regclass('messages') AND a.attname = 'search_tsv'))"
)
#: the text part of the column (regconfig constants print as quoted names, schema-qualified only
#: when not on the search path — built-in configurations never are)
_TEXT_PART = re.compile(r"to_tsvector\('((?:[^']|'')+)'::regconfig,\s*search_text\)")


def text_config(expression: str) -> str | None:
    """The configuration of the text part of a ``search_tsv`` expression or function (None: not
    found)."""
    m = _TEXT_PART.search(expression)
    return m.group(1).replace("''", "'") if m else None


async def indexed_config(c: AsyncConnection) -> str | None:
    """The configuration ``messages.search_tsv`` stems its text with; None on SQLite (FTS5 has no
    configuration: the ``unicode61`` tokenizer, fixed by migration 0008) or where the column is
    missing or unrecognisable (a schema older than 0008)."""
    if c.dialect.name != "postgresql":
        return None
    expression = (await c.execute(_EXPRESSION)).scalar()
    return text_config(expression) if expression else None

"""The dialect's INSERT construct: the one place that picks PostgreSQL's or SQLite's.

Why it exists: ``INSERT … ON CONFLICT DO NOTHING / DO UPDATE`` is spelled the same on both
databases but lives in each dialect's own ``insert``; stores call ``insert(c, table)`` instead of
repeating the switch.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Table, literal
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def insert(c: AsyncConnection, table: Table) -> postgresql.Insert | sqlite.Insert:
    """``table``'s INSERT for ``c``'s database, with ``on_conflict_do_nothing`` / ``_do_update``."""
    if c.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def unindexed(col: ColumnElement[str]) -> ColumnElement[str]:
    """``col`` as an expression no index can serve (``col || ''``), for a filter that must not
    drive the plan: SQLite has no statistics and, between two indexes that match as many
    equalities, may pick the one that spans every user's rows (``workspace_id = ''`` is true of
    every personal conversation) over the caller's own ``user_id`` index. The value is the same."""
    return col.op("||")(literal(""))

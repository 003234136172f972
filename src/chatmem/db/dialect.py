"""The dialect's INSERT construct: the one place that picks PostgreSQL's or SQLite's.

Why it exists: ``INSERT … ON CONFLICT DO NOTHING / DO UPDATE`` is spelled the same on both
databases but lives in each dialect's own ``insert``; stores call ``insert(c, table)`` instead of
repeating the switch.
"""

from __future__ import annotations

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def insert(c: AsyncConnection, table: Table) -> postgresql.Insert | sqlite.Insert:
    """``table``'s INSERT for ``c``'s database, with ``on_conflict_do_nothing`` / ``_do_update``."""
    if c.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)

"""The SQL the operator tools run on a database *file*: a SQLite backup being written, checked
or restored (plain ``sqlite3``, no engine: the file may belong to no running app).

Why a store of its own: backups read across every table and must stay out of the domains'
stores; this is the one module of ``ops`` that speaks SQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: the tables a backup report counts (the ones an operator recognises)
REPORT_TABLES = ("users", "conversations", "messages", "memories", "jobs")


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def online_copy(src: Path, dest: Path) -> None:
    """Copy ``src`` into ``dest`` with SQLite's online backup API.

    One step (``pages=-1``) under one read transaction: the copy is the database as of one
    instant, even while other processes write (WAL lets them go on beside the reader). The copy
    is switched to a rollback journal so it is one self-contained file.
    """
    with connect(src) as s, connect(dest) as d:
        s.backup(d, pages=-1)
        d.execute("PRAGMA journal_mode=DELETE")
    s.close()
    d.close()


def is_sqlite_file(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def inspect(path: Path) -> tuple[list[str], str | None, dict[str, int]]:
    """(problems, schema revision, row counts) of a SQLite chatmem database file."""
    try:
        return _inspect(path)
    except sqlite3.DatabaseError as e:  # "database disk image is malformed", a torn file …
        return [f"not a readable SQLite database ({e})"], None, {}


def _inspect(path: Path) -> tuple[list[str], str | None, dict[str, int]]:
    problems: list[str] = []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        bad = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if bad != ["ok"]:
            problems.append("integrity check failed: " + "; ".join(bad[:5]))
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            problems.append(f"{len(fk)} rows point at missing parents (first in table {fk[0][0]})")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        revision = None
        if "alembic_version" in tables:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        counts = {
            t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
            for t in REPORT_TABLES
            if t in tables
        }
    finally:
        conn.close()
    return problems, revision, counts


def has_users(path: Path) -> bool:
    """Whether a SQLite database file holds any chatmem user (restore asks before replacing)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        named = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='users'")
        if named.fetchone() is None:
            return False
        return conn.execute("SELECT 1 FROM users LIMIT 1").fetchone() is not None
    finally:
        conn.close()

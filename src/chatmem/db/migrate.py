"""Run Alembic migrations programmatically (no alembic.ini needed): upgrade, downgrade, current.

Several processes may start at once on one PostgreSQL (N API replicas and the workers of a
deployment all run ``upgrade`` at start): the migration environment takes a transaction-scoped
advisory lock first (``MIGRATION_LOCK``, env.py), so one process migrates and the others wait
and then find the schema current. ``head()`` and ``current(c)`` tell readiness checks and the
CLI whether a database is at the schema this code expects.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from .engine import ensure_sqlite_dir, normalize_url

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: pg_advisory_xact_lock key held while migrating (any constant; "chatmem" in ASCII)
MIGRATION_LOCK = 0x636861746D656D


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return cfg


def _in_thread(fn, *args) -> None:
    """Alembic's env runs its own event loop; keep it off any loop the caller is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        fn(*args)
        return
    err: list[BaseException] = []

    def run() -> None:
        try:
            fn(*args)
        except BaseException as e:  # re-raised below
            err.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if err:
        raise err[0]


def upgrade(url: str, revision: str = "head") -> None:
    ensure_sqlite_dir(normalize_url(url))  # a fresh checkout has no ./data/ yet
    _in_thread(command.upgrade, alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    _in_thread(command.downgrade, alembic_config(url), revision)


@functools.cache
def head() -> str:
    """The newest revision of the migrations shipped with this code."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    heads = script.get_heads()
    assert len(heads) == 1, f"the migrations have {len(heads)} heads: {heads}"
    return heads[0]


async def current(c: AsyncConnection) -> str | None:
    """The database's revision (None: no chatmem schema — never migrated)."""
    try:
        async with c.begin_nested():
            row = (await c.execute(text("SELECT version_num FROM alembic_version"))).first()
    except DBAPIError:  # no alembic_version table
        return None
    return row[0] if row else None


def known(revision: str) -> bool:
    """Whether ``revision`` is one of the migrations shipped with this code."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    try:
        return script.get_revision(revision) is not None
    except Exception:  # alembic raises its own ResolutionError family for unknown ids
        return False


def previous(revision: str) -> str | None:
    """The revision ``revision`` migrates from (None for the first)."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    down = script.get_revision(revision).down_revision
    return down if isinstance(down, str) or down is None else down[0]

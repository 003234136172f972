"""Run Alembic migrations programmatically (no alembic.ini needed): upgrade, downgrade, current."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config

from .engine import ensure_sqlite_dir, normalize_url

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


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

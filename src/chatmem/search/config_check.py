"""Start-up guard: the text search configuration in the settings must be the index's.

Why: on PostgreSQL ``CHATMEM_SEARCH_CONFIG`` is read twice — by migration 0008, which bakes it
into the index (``messages.search_tsv``), and by every search and recall query, at run time. If an
operator changes it after migrating, query terms are normalised one way and the index the other
(``english`` stems "running" to ``run``; ``simple`` keeps ``running``), and search and recall
silently stop finding what they used to.

Decision: **refuse to start** (``serve``, ``worker``, ``migrate``, and any app or runtime started
in-process), naming both values and the fix — never run queries with a configuration other than
the setting, and never quietly substitute the index's:

- substituting would keep results right but make the setting lie: the operator who switched to
  ``english`` would believe stemming is on, and a log warning is exactly what goes unread;
- refusing costs nothing that matters: no data changes, and putting the old value back (the
  value the index was built with, printed in the error) restores service at once;
- a rolling deploy that changes the variable stops at its first new process instead of leaving
  replicas that disagree.

There is no supported re-index to another configuration in this release (docs/recall.md). SQLite
is unaffected: FTS5's ``unicode61`` tokenizer has no configuration and the setting is not read.
"""

from __future__ import annotations

from ..db.engine import Database
from . import config_store


class SearchConfigMismatch(RuntimeError):
    """The settings' text search configuration is not the one the message index was built with."""


def mismatch(indexed: str | None, setting: str) -> str | None:
    """The error to show when the index's configuration is not ``setting`` (None: they agree, or
    there is nothing to compare — SQLite, or no index yet)."""
    if indexed is None or indexed == setting:
        return None
    return (
        f"CHATMEM_SEARCH_CONFIG is {setting!r} but the database's full-text index was built with "
        f"{indexed!r} (at migration): search and recall would silently miss messages. "
        f"Set CHATMEM_SEARCH_CONFIG={indexed} (the value the database was migrated with); "
        "changing the configuration of an existing database needs its index rebuilt, "
        "which chatmem does not do (docs/recall.md)"
    )


async def problem(db: Database, setting: str) -> str | None:
    """``mismatch`` for the database ``db``: one catalog read on PostgreSQL, none on SQLite."""
    if db.dialect != "postgresql":
        return None
    async with db.read() as c:
        return mismatch(await config_store.indexed_config(c), setting)


async def verify(db: Database, setting: str) -> None:
    """Raise ``SearchConfigMismatch`` when the setting is not the index's configuration."""
    found = await problem(db, setting)
    if found:
        raise SearchConfigMismatch(found)


class StartupCheck:
    """The first service of a Runtime: its ``start`` verifies the configuration, so an app's
    lifespan (and ``chatmem worker``) fails before serving or claiming a job."""

    def __init__(self, db: Database, setting: str) -> None:
        self.db = db
        self.setting = setting

    async def start(self) -> None:
        await verify(self.db, self.setting)

    async def stop(self) -> None:
        return None

"""SQLite's WAL is checkpointed on a worker thread, not inside the COMMIT of a request.

SQLite's automatic checkpoint (at 1,000 WAL pages) copied every waiting page into the database
within the COMMIT that crossed the line: a 10,000-message fork paid 30–70 ms for it (issue 18).
``Database`` turns it off and starts a PASSIVE checkpoint after a write that leaves a big WAL.
"""

from __future__ import annotations

import sqlite3

from chatmem.db import engine as engine_mod
from chatmem.db.engine import Database


def _rows_in_main_file(path) -> int:
    """Rows of ``t`` in the database file itself (``immutable`` ignores the WAL)."""
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        has = con.execute("SELECT count(*) FROM sqlite_master WHERE name = 't'").fetchone()[0]
        return con.execute("SELECT count(*) FROM t").fetchone()[0] if has else 0
    finally:
        con.close()


async def _fill(db: Database, rows: int) -> None:
    async with db.write() as c:
        await c.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (x TEXT)")
    async with db.write() as c:
        await c.exec_driver_sql(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO t SELECT hex(randomblob(1000)) FROM n",
            (rows,),
        )


async def test_a_big_write_is_checkpointed_after_its_commit(tmp_path):
    path = tmp_path / "c.db"
    db = Database(f"sqlite:///{path}")
    try:
        async with db.read() as c:
            assert (await c.exec_driver_sql("PRAGMA wal_autocheckpoint")).scalar() == 0
        await _fill(db, 3000)  # ~6 MB of WAL: SQLite's own checkpoint would have run
        assert (tmp_path / "c.db-wal").stat().st_size >= engine_mod.WAL_CHECKPOINT_BYTES
        assert _rows_in_main_file(path) == 0  # the commit did not copy the pages
        assert db._checkpoint is not None
        await db._checkpoint
        assert _rows_in_main_file(path) == 3000
        async with db.read() as c:  # and the database reads the same through the WAL
            assert (await c.exec_driver_sql("SELECT count(*) FROM t")).scalar() == 3000
    finally:
        await db.dispose()


async def test_checkpoints_are_spaced_and_dispose_cancels_a_waiting_one(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_mod, "WAL_CHECKPOINT_EVERY_S", 60.0)
    path = tmp_path / "c.db"
    db = Database(f"sqlite:///{path}")
    await _fill(db, 3000)
    await db._checkpoint  # the first one runs at once
    assert _rows_in_main_file(path) == 3000
    await _fill(db, 3000)
    waiting = db._checkpoint
    assert waiting is not None and not waiting.done()  # the next one waits its turn
    assert _rows_in_main_file(path) == 3000
    await db.dispose()  # ... and never starts (closing the last connection checkpoints anyway)
    assert waiting.cancelled()


async def test_in_memory_databases_keep_sqlites_own_checkpoint():
    db = Database("sqlite:///:memory:")
    try:
        async with db.read() as c:
            assert (await c.exec_driver_sql("PRAGMA wal_autocheckpoint")).scalar() == 1000
    finally:
        await db.dispose()


def test_a_checkpoint_of_a_file_that_is_gone_creates_nothing(tmp_path):
    engine_mod._checkpoint(str(tmp_path / "gone.db"))
    assert not (tmp_path / "gone.db").exists()

"""db/sqlite_driver.py: one worker-thread trip per statement, none for a commit or rollback with
nothing open — and a transaction is still rolled back when it fails or its task is cancelled
mid-statement (else the pool would keep a connection holding SQLite's write lock)."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from sqlalchemy import text

from chatmem.db.engine import Database
from chatmem.db.migrate import upgrade


@pytest.fixture
def sqlite_db(tmp_path):
    url = f"sqlite:///{tmp_path}/driver.db"
    upgrade(url)
    return url


def _count_trips(monkeypatch) -> list[str]:
    """Every function the adapter sends to aiosqlite's worker thread, by name."""
    import aiosqlite

    trips: list[str] = []
    real = aiosqlite.Connection._execute

    async def counted(self, fn, *args, **kwargs):
        trips.append(getattr(fn, "__name__", "?"))
        return await real(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return trips


async def test_a_lone_read_is_one_trip(sqlite_db, monkeypatch):
    db = Database(sqlite_db)
    try:
        async with db.read_once() as c:  # the pool's first connection: opened outside the count
            await c.execute(text("SELECT 1"))
        trips = _count_trips(monkeypatch)
        async with db.read_once() as c:
            assert (await c.execute(text("SELECT 2"))).scalar() == 2
        assert trips == ["_run"]  # no commit, no rollback on return to the pool
        trips.clear()
        async with db.write() as c:
            await c.execute(text("UPDATE users SET email = email WHERE id = 'none'"))
        assert trips == ["_run", "_commit"]  # BEGIN IMMEDIATE with the UPDATE, COMMIT
        trips.clear()
        async with db.write():  # no statement: no BEGIN, no COMMIT
            pass
        assert trips == []
    finally:
        await db.dispose()


async def test_a_failed_write_is_rolled_back(sqlite_db, monkeypatch):
    db = Database(sqlite_db)
    try:
        trips = _count_trips(monkeypatch)
        with pytest.raises(RuntimeError):
            async with db.write() as c:
                await c.execute(text("UPDATE users SET email = email WHERE id = 'none'"))
                raise RuntimeError("boom")
        assert "_rollback" in trips
        other = sqlite3.connect(sqlite_db.split("///", 1)[1], timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")  # the write lock is free again
            other.rollback()
        finally:
            other.close()
    finally:
        await db.dispose()


async def test_a_write_cancelled_while_beginning_releases_the_write_lock(sqlite_db):
    db = Database(sqlite_db)
    path = sqlite_db.split("///", 1)[1]
    try:
        for _ in range(20):  # cancel at various points of BEGIN IMMEDIATE's trip

            async def write():
                async with db.write() as c:
                    await c.execute(text("SELECT 1"))
                    await asyncio.sleep(0)

            task = asyncio.create_task(write())
            await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await asyncio.sleep(0.1)  # every queued trip has run
        async with db.write() as c:  # the process's own writes go on
            await c.execute(text("UPDATE users SET email = email WHERE id = 'none'"))
        other = sqlite3.connect(path, timeout=2)
        try:
            other.execute("BEGIN IMMEDIATE")  # no pooled connection kept the write lock
            other.rollback()
        finally:
            other.close()
    finally:
        await db.dispose()

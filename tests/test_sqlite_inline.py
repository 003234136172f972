"""db/sqlite_driver.py: a short (hot) statement that cannot wait runs on the event loop's thread —
no trip to aiosqlite's — and a lock held elsewhere never blocks the loop: the statement goes to
the worker thread, which waits on ``busy_timeout`` while the loop goes on serving. Errors,
rollbacks and cancellation behave as on the thread."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest
from sqlalchemy import exc, insert, select, text

from chatmem.db import hot
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.db.migrate import upgrade
from tests.test_generation import client_for, new_conv, running_app
from tests.test_sqlite_driver import _count_trips

_INSERT_USER = insert(t.users)
_WHOSE_THREAD = text("SELECT whose_thread()")
SSE = {"Accept": "text/event-stream"}


def _user(n: int) -> dict:
    return {"id": f"u{n}", "email": f"u{n}@example.com", "created_at": 1, "updated_at": 1}


@pytest.fixture
def path(tmp_path) -> str:
    p = str(tmp_path / "inline.db")
    upgrade(f"sqlite:///{p}")
    return p


@pytest.fixture
async def db(path):
    d = Database(f"sqlite:///{path}")
    async with d.read_once() as c:  # the pool's connection, opened before anything is counted
        await c.execute(text("SELECT 1"))
    yield d
    await d.dispose()


class Locker:
    """Another connection holding SQLite's write lock (as another process would), let go by
    ``release`` — or, should the event loop be blocked, by a watchdog thread after
    ``WATCHDOG_S`` (so that a blocked loop fails the test instead of hanging it): ``by`` says
    which."""

    WATCHDOG_S = 10.0

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN IMMEDIATE")
        self.by: str | None = None
        self._mutex = threading.Lock()
        self._watchdog = threading.Timer(self.WATCHDOG_S, self.release, ("watchdog",))
        self._watchdog.start()

    def release(self, by: str) -> None:
        with self._mutex:
            if self.by is None:
                self.by = by
                self.conn.rollback()

    def close(self) -> None:
        self._watchdog.cancel()
        self.release("close")
        self.conn.close()


async def _serve_then_release(locker: Locker, ticks: list[int], n: int = 20) -> None:
    """The loop's other work: ``n`` timer ticks, then the lock let go."""
    for i in range(n):
        await asyncio.sleep(0.005)
        ticks.append(i)
    locker.release("timer")


async def test_hot_statements_and_commit_run_on_the_loops_thread(db, monkeypatch):
    async with db.write() as c:
        raw = (await c.get_raw_connection()).driver_connection
        raw._conn.create_function("whose_thread", 0, threading.get_ident)
    trips = _count_trips(monkeypatch)
    async with db.write() as c:  # BEGIN IMMEDIATE, two statements, COMMIT: no trip
        await hot.execute(c, _INSERT_USER, _user(1))
        assert (await hot.execute(c, _WHOSE_THREAD)).scalar() == threading.get_ident()
    async with db.read() as c:  # BEGIN, a read, COMMIT
        assert (await hot.execute(c, select(t.users.c.id))).scalars().all() == ["u1"]
    async with db.write_once() as c:  # a lone write in autocommit
        await hot.execute(c, _INSERT_USER, _user(2))
    assert trips == []
    async with db.write() as c:  # SQLAlchemy's own execute takes the thread; so does the COMMIT
        assert (await c.execute(_WHOSE_THREAD)).scalar() != threading.get_ident()
        await hot.execute(c, _INSERT_USER, _user(3))  # the transaction is not short any more
    assert trips == ["_run", "_commit"]
    trips.clear()
    many = [_user(n) for n in range(10, 10 + hot.INLINE_ROWS + 1)]
    async with db.write() as c:  # more rows than a short statement's: the thread's
        await hot.execute(c, _INSERT_USER, many)
    assert trips == ["_run", "_commit"]
    async with db.read() as c:
        assert len((await c.execute(select(t.users.c.id))).all()) == 3 + len(many)


@pytest.mark.parametrize("block", ["write", "write_once"])
async def test_a_held_write_lock_never_blocks_the_loop(db, path, monkeypatch, block):
    """Another connection holds the write lock: the write's BEGIN IMMEDIATE (or its lone
    statement) finds it busy at once, goes to the worker thread and waits there; the loop keeps
    serving a timer, which lets the lock go (a loop blocked by the write would never get to
    it: the watchdog would)."""
    trips = _count_trips(monkeypatch)
    other, ticks = Locker(path), []
    try:
        timer = asyncio.create_task(_serve_then_release(other, ticks))
        async with getattr(db, block)() as c:
            await hot.execute(c, _INSERT_USER, _user(1))
        await timer
        assert other.by == "timer" and len(ticks) == 20  # the write waited for the timer
        # the statement (after BEGIN IMMEDIATE) on the thread; the COMMIT (a transaction of
        # short statements, the worker idle again) and the next write on the loop's thread
        assert trips == ["_run"]
        async with db.write() as c:
            await hot.execute(c, _INSERT_USER, _user(2))
        assert trips == ["_run"]
    finally:
        other.close()
    async with db.read() as c:
        assert (await c.execute(select(t.users.c.id).order_by(t.users.c.id))).scalars().all() == [
            "u1",
            "u2",
        ]


async def test_reads_run_on_the_loops_thread_beside_a_writer(db, path, monkeypatch):
    """WAL: a read never waits on the writer — it runs here while another connection writes."""
    async with db.write() as c:
        await hot.execute(c, _INSERT_USER, _user(1))
    other = Locker(path)
    try:
        other.conn.execute("DELETE FROM users")  # not committed: the read sees the row
        trips = _count_trips(monkeypatch)
        async with db.read_snapshots() as c:
            assert (await hot.execute(c, select(t.users.c.id))).scalars().all() == ["u1"]
        async with db.read() as c:
            assert (await hot.execute(c, select(t.users.c.id))).scalars().all() == ["u1"]
        assert trips == [] and other.by is None
    finally:
        other.close()


async def test_an_error_on_the_loops_thread_is_sqlalchemys_and_rolls_back(db, monkeypatch):
    trips = _count_trips(monkeypatch)
    with pytest.raises(exc.IntegrityError):
        async with db.write() as c:
            await hot.execute(c, _INSERT_USER, _user(1))
            await hot.execute(c, _INSERT_USER, {**_user(1), "email": "other@example.com"})
    assert trips == []  # the error and the ROLLBACK on the loop's thread too
    async with db.read() as c:
        assert (await c.execute(select(t.users.c.id))).all() == []
    lone = sqlite3.connect(db.engine.url.database, timeout=0)
    try:
        lone.execute("BEGIN IMMEDIATE")  # the write lock was let go
        lone.rollback()
    finally:
        lone.close()


async def test_a_write_cancelled_while_it_waits_for_the_lock(db, path, monkeypatch):
    """The write waits on the thread (the lock held elsewhere) and its task is cancelled: the
    ROLLBACK queues behind the waiting statement (never on the loop's thread beside it), the
    connection goes back to the pool clean, and the next write runs on the loop's thread."""
    trips = _count_trips(monkeypatch)
    other, ticks = Locker(path), []
    try:
        started = asyncio.Event()

        async def write():
            async with db.write() as c:
                started.set()
                await hot.execute(c, _INSERT_USER, _user(1))

        task = asyncio.create_task(write())
        await started.wait()
        await asyncio.sleep(0.02)  # its statement is on the thread, waiting for the lock
        assert trips == ["_run"]
        task.cancel()
        await _serve_then_release(other, ticks, 2)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert other.by == "timer" and trips == ["_run", "_rollback"]
        async with db.write() as c:
            await hot.execute(c, _INSERT_USER, _user(2))
        assert trips == ["_run", "_rollback"]
    finally:
        other.close()
    async with db.read() as c:
        assert (await c.execute(select(t.users.c.id))).scalars().all() == ["u2"]
    lone = sqlite3.connect(path, timeout=0)
    try:
        lone.execute("BEGIN IMMEDIATE")
        lone.rollback()
    finally:
        lone.close()


async def test_a_uri_database_keeps_every_statement_on_the_thread(path, monkeypatch):
    """SQLite's own checkpoint runs inside a COMMIT there (engine.py leaves it on): not on the
    loop's thread."""
    d = Database(f"sqlite:///file:{path}?mode=rw&uri=true")
    try:
        async with d.read_once() as c:
            await c.execute(text("SELECT 1"))
        trips = _count_trips(monkeypatch)
        async with d.write() as c:
            await hot.execute(c, _INSERT_USER, _user(1))
        assert trips == ["_run", "_commit"]
    finally:
        await d.dispose()


async def test_a_demo_turn_takes_no_thread_trip(tmp_path, monkeypatch):
    """Every statement of a demo turn is hot: a turn runs without a trip to aiosqlite's thread
    (no flush, no sweep, no worker, no background checkpoint; the key stays cached). Work of
    this process beside the turn (on a loaded machine: a BUSY answer's retry on the thread,
    which is the design) may still take one, and the counter sees every connection's trips: so
    up to three turns are run and one must take none (the code before took several each)."""
    from chatmem.db import engine

    monkeypatch.setattr(engine, "WAL_CHECKPOINT_BYTES", 2**40)
    url = f"sqlite:///{tmp_path}/turn.db"
    upgrade(url)
    quiet = dict(flush_interval_ms=60_000, run_worker=False, sweep_interval_s=3600)
    async with running_app(url, auth_cache_s=3600, **quiet) as application:
        async with client_for(application) as c:
            application.state.runtime.generation.flusher.poke = lambda: None
            for _ in range(2):  # the pool's connections opened, the key cached
                cid = await new_conv(c)
                r = await c.post(
                    f"/api/conversations/{cid}/messages", json={"content": "hi"}, headers=SSE
                )
                assert r.status_code == 200, r.text
            trips = _count_trips(monkeypatch)
            seen = []
            for _ in range(3):
                trips.clear()
                cid = await new_conv(c)
                body = {"content": "What is a DAG?"}
                r = await c.post(f"/api/conversations/{cid}/messages", json=body, headers=SSE)
                assert r.status_code == 200 and "event: done" in r.text
                seen.append(list(trips))
                if not trips:
                    break
            assert [] in seen, seen

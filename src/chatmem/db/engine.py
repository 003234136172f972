"""Engine factory: URL normalisation, SQLite pragmas, and the read/write transaction helpers.

Accepted URLs: ``sqlite:///path``, ``sqlite+aiosqlite:///path``, ``postgresql://…``,
``postgres://…`` and ``postgresql+asyncpg://…``; all are normalised to the async driver.

SQLite has one writer at a time. Write transactions start with ``BEGIN IMMEDIATE`` (so two writers
never deadlock on a lock upgrade) behind an in-process lock (so waiting writers queue instead of
spinning on ``busy_timeout``); reads use plain deferred transactions and WAL lets them run beside a
writer. PostgreSQL needs none of this; there a pooled connection is not pinged at checkout: a
transaction's BEGIN is the check, sent again on a new connection when it finds the old one dead
(``_first_trip``).

SQLite's WAL is checkpointed in the background (``WAL_CHECKPOINT_BYTES``): by default SQLite copies
the WAL into the database inside the COMMIT that pushes it past 1,000 pages, so whichever request
commits then waits for everyone's pages (30–70 ms after a 10,000-message fork, issue 18).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import quote

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.ext.asyncio.base import _run_to_completion
from sqlalchemy.util.concurrency import await_, greenlet_spawn

from . import faults, sqlite_driver
from .fulltext import register_sqlite_functions

#: SQLite's memory-mapped I/O window (bytes): the whole database up to SQLite's own cap.
MMAP_SIZE = 2**31

#: SQLite: a write that leaves the WAL file at least this big starts a PASSIVE checkpoint on a
#: worker thread (SQLite's own automatic one, at 1,000 pages, is turned off: it ran inside the
#: COMMIT of the request that crossed the line). PASSIVE never blocks readers or writers; the
#: WAL file keeps its size once grown (SQLite reuses it from the start), hence also
WAL_CHECKPOINT_BYTES = 4 * 2**20
#: at most one checkpoint per this many seconds (a later write schedules the next one).
WAL_CHECKPOINT_EVERY_S = 1.0

log = logging.getLogger(__name__)


#: PostgreSQL: a block outside a transaction (``read_once``, ``write_once``) whose pooled
#: connection last finished a block this long ago or more is pinged first (``_first_trip``)
PING_AFTER_IDLE_S = 1.0
#: the monotonic time a pooled connection last finished a block (or was opened): its ``info`` key
_ALIVE_AT = "chatmem_alive_at"


def _ping_once(dbapi_connection) -> bool:
    """PostgreSQL's ping: ``SELECT 1`` over the simple protocol, one round trip."""
    try:
        await_(dbapi_connection._connection.execute("SELECT 1"))
    except Exception as error:  # translated as the adapter's own ping does (disconnect checks)
        dbapi_connection._handle_exception(error)
    return True


def normalize_url(url: str) -> str:
    """Map the plain and driver-explicit URL forms onto the async drivers."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    u = make_url(url)
    backend = u.get_backend_name()
    if backend == "sqlite":
        u = u.set(drivername="sqlite+aiosqlite")
    elif backend == "postgresql":
        u = u.set(drivername="postgresql+asyncpg")
    else:
        raise ValueError(f"unsupported database URL {url!r}: use sqlite:// or postgresql://")
    return u.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(normalize_url(url)).get_backend_name() == "sqlite"


def ensure_sqlite_dir(url: str) -> None:
    """Create the folder of a SQLite database file (no-op for other URLs and in-memory DBs)."""
    u = make_url(url)
    db = u.database
    if u.get_backend_name() == "sqlite" and db and db != ":memory:" and not db.startswith("file:"):
        parent = os.path.dirname(os.path.abspath(db))
        os.makedirs(parent, exist_ok=True)


class Database:
    """An async engine plus the transaction helpers every store uses."""

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 10) -> None:
        self.url = normalize_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        self.sqlite = self.dialect == "sqlite"
        self._write_lock = asyncio.Lock() if self.sqlite else None
        #: SQLite file whose WAL this object checkpoints (None: in-memory / URI databases, which
        #: keep SQLite's automatic checkpoint)
        self._sqlite_file = _sqlite_file(self.url) if self.sqlite else None
        self._checkpoint: asyncio.Task | None = None
        self._checkpoint_run: asyncio.Future | None = None
        self._checkpointed_at = 0.0
        if self.sqlite:
            ensure_sqlite_dir(self.url)
            self.engine: AsyncEngine = create_async_engine(
                self.url,
                echo=echo,
                connect_args={"timeout": 30},
                module=sqlite_driver.dbapi(),  # one thread trip per statement (sqlite_driver.py)
            )
            self._install_sqlite_hooks()
        else:
            # Plan every statement with its actual parameters: a generic plan cached while a table
            # was tiny (seq scans) would otherwise outlive its growth, and per-conversation sizes are
            # skewed (5 messages vs 10,000), which generic plans cannot see. Side effect: the
            # per-row foreign-key checks and ON DELETE actions (saved plans) are re-planned for
            # every row; bulk writes run them with PostgreSQL's default (reuse_key_check_plans).
            self.engine = create_async_engine(
                self.url,
                echo=echo,
                pool_size=pool_size,
                max_overflow=20,
                pool_pre_ping=False,  # the block's first round trip checks instead (_first_trip)
                connect_args={"server_settings": {"plan_cache_mode": "force_custom_plan"}},
            )
            self._install_pg_hooks()

    def _install_pg_hooks(self) -> None:
        @event.listens_for(self.engine.sync_engine, "connect")
        def _opened(_dbapi_conn, record):  # pragma: no cover - exercised by every PG test
            record.info[_ALIVE_AT] = time.monotonic()  # a new connection needs no ping

        @event.listens_for(self.engine.sync_engine, "handle_error")
        def _broken_connection(ctx):  # pragma: no cover - exercised by the fault tests
            # A connection killed in the middle of an operation (pg_terminate_backend, a
            # failover) can leave asyncpg's protocol mid-state: every later use answers
            # "another operation is in progress". SQLAlchemy does not count that as a
            # disconnect, so the broken connection went back to the pool and failed request
            # after request. Counting it as one discards it; the pool reconnects.
            if faults.broken_connection(ctx.original_exception):
                ctx.is_disconnect = True

    def _install_sqlite_hooks(self) -> None:
        sync_engine = self.engine.sync_engine

        @event.listens_for(sync_engine, "connect")
        def _on_connect(dbapi_conn, _record):  # pragma: no cover - exercised by every test
            # Let us emit BEGIN ourselves (pysqlite's implicit transactions are not what we want).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            # reads through a memory map (the OS page cache, shared by every connection) instead
            # of a read() per page: a search's 400 scattered rows cost half as much at 1M
            # messages (bench/search.py). SQLite caps the map at its compiled limit (2 GiB).
            cur.execute(f"PRAGMA mmap_size={MMAP_SIZE}")
            if self._sqlite_file is not None:  # checkpointed in the background (_after_write)
                cur.execute("PRAGMA wal_autocheckpoint=0")
            cur.close()
            register_sqlite_functions(dbapi_conn)
            # short statements that cannot wait run on the loop's thread (sqlite_driver.py)
            dbapi_conn.allow_inline()

        @event.listens_for(sync_engine, "begin")
        def _on_begin(conn):  # pragma: no cover - exercised by every test
            # "" = no transaction (read_once); else sent with the first statement, in its trip
            # to aiosqlite's thread (sqlite_driver.OneTripConnection.begin_with)
            conn.connection.dbapi_connection.begin_with(conn.info.pop("chatmem_begin", "BEGIN"))

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A read transaction (never blocks the writer on SQLite's WAL)."""
        async with self._transaction("BEGIN") as conn:
            yield conn

    @asynccontextmanager
    async def read_once(self) -> AsyncIterator[AsyncConnection]:
        """A connection for ONE read statement, outside any transaction (a statement is its own
        snapshot): no BEGIN/COMMIT around it — the per-request key or session lookup. Never for
        two statements that must agree with each other."""
        async with self._transaction(None) as conn:
            yield conn

    @asynccontextmanager
    async def read_snapshots(self) -> AsyncIterator[AsyncConnection]:
        """A connection whose read statements each see their own snapshot, outside a transaction
        (no BEGIN/COMMIT round trips): what PostgreSQL's READ COMMITTED gives a transaction
        anyway, now on SQLite too. For reads that need not agree with each other (a turn's
        context: its path is one statement, the memories another)."""
        async with self.read_once() as conn:
            yield conn

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction: committed on success, rolled back on any exception."""
        async with self._writing("BEGIN IMMEDIATE") as conn:
            yield conn

    @asynccontextmanager
    async def write_once(self) -> AsyncIterator[AsyncConnection]:
        """A connection for ONE write statement, which is its own transaction: no BEGIN/COMMIT
        round trips around it (SQLite: autocommit, still behind the process's write lock; a
        lone statement takes the write lock as it starts, waiting on ``busy_timeout`` like
        ``BEGIN IMMEDIATE``). Never for two statements that must commit together."""
        async with self._writing(None) as conn:
            yield conn

    @asynccontextmanager
    async def _writing(self, begin: str | None) -> AsyncIterator[AsyncConnection]:
        if self._write_lock is None:
            async with self._transaction(begin) as conn:
                with _marked(conn, begin):
                    yield conn
            return
        async with self._write_lock, self._transaction(begin) as conn:
            with _marked(conn, begin):
                yield conn
        self._after_write()

    @asynccontextmanager
    async def _transaction(self, begin: str | None) -> AsyncIterator[AsyncConnection]:
        """A pooled connection in a transaction opened with ``begin`` (SQLite: ``BEGIN`` or
        ``BEGIN IMMEDIATE``, sent with the first statement: sqlite_driver.py; PostgreSQL: any
        non-None value, BEGIN sent at once as the connection's check: ``_first_trip``) or none
        (``None``: autocommit, each statement its own); committed, then the ``after_commit``
        callbacks run; rolled back and returned to the pool on any exception or cancellation.

        What ``async with engine.connect() as c, c.begin()`` does, in two greenlet hops
        instead of four and without a task per close (~0.1 ms of CPU per transaction, and a
        turn has five or six): connect + begin in one, commit + close in the other. Only the
        close after a failure runs shielded from cancellation (SQLAlchemy's own
        ``_run_to_completion``), so a cancelled block still returns its connection rolled back."""
        sync = await greenlet_spawn(_open, self.engine.sync_engine, begin, self.sqlite)
        info = sync.info  # the pooled connection's dict (reachable while the connection is not)
        try:
            yield AsyncConnection(self.engine, sync)
            callbacks = await greenlet_spawn(_finish, sync)
        except BaseException:
            info.pop(_AFTER_COMMIT, None)
            await _run_to_completion(greenlet_spawn(sync.close))
            raise
        for fn in callbacks:
            fn()

    def _after_write(self) -> None:
        """SQLite, after a commit: checkpoint the WAL on a worker thread once it is
        ``WAL_CHECKPOINT_BYTES`` or more, at most once per ``WAL_CHECKPOINT_EVERY_S``."""
        if self._sqlite_file is None or (self._checkpoint and not self._checkpoint.done()):
            return
        try:
            if os.path.getsize(f"{self._sqlite_file}-wal") < WAL_CHECKPOINT_BYTES:
                return
        except OSError:
            return
        wait = self._checkpointed_at + WAL_CHECKPOINT_EVERY_S - time.monotonic()
        self._checkpoint = asyncio.get_running_loop().create_task(self._checkpoint_after(wait))

    async def _checkpoint_after(self, wait: float) -> None:
        if wait > 0:
            await asyncio.sleep(wait)
        self._checkpointed_at = time.monotonic()
        assert self._sqlite_file is not None  # only scheduled for a file database (_after_write)
        self._checkpoint_run = asyncio.get_running_loop().run_in_executor(
            None, _checkpoint, self._sqlite_file
        )
        await asyncio.shield(self._checkpoint_run)  # dispose() waits for a running one

    async def dispose(self) -> None:
        loop = asyncio.get_running_loop()
        if self._checkpoint is not None and self._checkpoint.get_loop() is loop:
            self._checkpoint.cancel()  # one still waiting never starts
            await asyncio.gather(self._checkpoint, return_exceptions=True)
        if self._checkpoint_run is not None and self._checkpoint_run.get_loop() is loop:
            await asyncio.gather(self._checkpoint_run, return_exceptions=True)
        await self.engine.dispose()


_WRITING = "chatmem_write_transaction"


@contextmanager
def _marked(conn: AsyncConnection, begin: str | None) -> Iterator[None]:
    """Mark ``conn`` as in a write transaction (``begin`` not None) while the block runs."""
    if begin is None:
        yield
        return
    info = conn.sync_connection.info  # type: ignore[union-attr]
    info[_WRITING] = True
    try:
        yield
    finally:
        info.pop(_WRITING, None)


def in_write_transaction(c: AsyncConnection) -> bool:
    """Whether ``c`` came from ``Database.write()``: a transaction that may write (and, on
    SQLite, holds the write lock) — a caller can then do more writing in it."""
    return bool(c.sync_connection.info.get(_WRITING)) if c.sync_connection else False


def _sqlite_file(url: str) -> str | None:
    db = make_url(url).database
    if not db or db == ":memory:" or db.startswith("file:") or make_url(url).query.get("uri"):
        return None
    return os.path.abspath(db)


def _checkpoint(path: str) -> None:
    """One PASSIVE checkpoint of ``path``'s WAL on its own short-lived connection (on a worker
    thread): copies what no reader still needs; never waits for, nor blocks, anyone."""
    try:  # mode=rw: a file that is gone is not created anew
        con = sqlite3.connect(f"file:{quote(path)}?mode=rw", uri=True, timeout=0)
        try:
            con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:  # e.g. the file is gone: the next write's commit tries again
        log.debug("background WAL checkpoint of %s failed: %s", path, exc)


_AFTER_COMMIT = "chatmem_after_commit"


def after_commit(c: AsyncConnection, fn: Callable[[], object]) -> None:
    """Call ``fn`` once the write of ``c`` (a ``Database.write``/``write_once`` block) has
    committed; never if it rolls back."""
    sync = c.sync_connection
    assert sync is not None
    sync.info.setdefault(_AFTER_COMMIT, []).append(fn)


def _open(engine: Engine, begin: str | None, sqlite: bool) -> Connection:
    """(In a greenlet) a pooled connection with its transaction begun (``Database._transaction``)."""
    sync = engine.connect()
    try:
        if sqlite:
            sync.info["chatmem_begin"] = begin or ""  # "": pysqlite's autocommit mode
        else:
            _first_trip(sync, begin is not None)
            if begin is None:  # reset to the pool's level when the connection goes back
                sync.execution_options(isolation_level="AUTOCOMMIT")
        sync.begin()
    except BaseException:
        sync.close()
        raise
    return sync


def _first_trip(sync: Connection, transaction: bool) -> None:
    """(In a greenlet, PostgreSQL) the pooled connection proven alive by the block's own first
    round trip, instead of a pre-ping per checkout (one round trip each, ~4 a demo turn).

    A transaction's BEGIN is sent here (asyncpg's adapter would send it before the first
    statement anyway) and is the check: when it fails as a disconnect (a backend killed while
    the connection sat in the pool, a restart, a failover) nothing can have been written, so
    the connection is invalidated — with the rest of the pool, as SQLAlchemy's pre-ping did —
    and the BEGIN is sent once more on a new one. A block outside a transaction has no such
    harmless first trip: its connection is pinged when asyncpg has seen it closed or when it
    last finished a block ``PING_AFTER_IDLE_S`` or more ago (a connection in steady use is not;
    one whose backend died unnoticed since fails its statement: a 503 ``database_unavailable``,
    as one dying right after a ping did). Any failure after this point propagates as before.
    Cancelled while the BEGIN or ping is out, the connection is closed, not pooled: whether the
    server began a transaction is unknown, and a session left in one would hold every later
    block's statements uncommitted."""
    for last in (False, True):
        fairy = sync.connection  # a new pooled connection after an invalidation
        adapt: Any = fairy.dbapi_connection
        try:
            if transaction:
                await_(adapt._start_transaction())
            elif (
                adapt._connection.is_closed()
                or time.monotonic() - fairy.info.get(_ALIVE_AT, 0.0) >= PING_AFTER_IDLE_S
            ):
                _ping_once(adapt)
            return
        except sync.dialect.loaded_dbapi.Error as error:
            try:  # SQLAlchemy's handling: wrapped, disconnect checks, hooks, invalidation
                sync._handle_dbapi_exception(error, _FIRST[transaction], None, None, None)
            except DBAPIError as wrapped:
                if last or not wrapped.connection_invalidated:
                    raise
        except BaseException:
            adapt._connection.terminate()
            sync.invalidate()
            raise


_FIRST = {True: "BEGIN", False: "SELECT 1"}


def _finish(sync: Connection) -> list[Callable[[], object]]:
    """(In a greenlet) commit, then return the connection to the pool: its ``after_commit``
    callbacks (taken before another task can check the connection out)."""
    sync.commit()
    info = sync.info
    callbacks = info.pop(_AFTER_COMMIT, [])
    info[_ALIVE_AT] = time.monotonic()  # it just answered (PostgreSQL's _first_trip)
    sync.close()
    return callbacks


#: ``reuse_key_check_plans``'s two statements (PostgreSQL)
_KEY_PLANS_REUSED = text("SET LOCAL plan_cache_mode = auto")
_KEY_PLANS_ENGINE = text("SET LOCAL plan_cache_mode = DEFAULT")


@asynccontextmanager
async def reuse_key_check_plans(c: AsyncConnection) -> AsyncIterator[None]:
    """Around a bulk write inside a ``Database.write`` transaction: PostgreSQL's per-row
    foreign-key checks and ON DELETE cascades / SET NULLs reuse their plans (no-op on SQLite).

    PostgreSQL runs those per-row queries with saved plans, and the engine's
    ``plan_cache_mode = force_custom_plan`` (``Database``) made it plan each one again for every
    row: deleting a 10,000-message conversation cascades ~8 queries per message (1.0–1.9 s
    instead of 0.55–0.95 in bench/scale.py), a fork's 10,000 copies check 4 keys each (370 ms
    instead of 120); docs/data-model.md has the other bulk writes' figures.
    The block runs with the default mode (``auto``: generic plans once they cost no more); after
    it, the engine's setting is back for the rest of the transaction (``SET LOCAL … DEFAULT``
    is the connection's setting). Keep in the block only statements whose own plan is the same
    whatever their parameters (key lookups, inserts): they are planned in that mode too.
    Nothing is reset when the block raises: the error aborts the transaction (or the savepoint),
    which undoes the ``SET LOCAL``."""
    if c.dialect.name != "postgresql":
        yield
        return
    await c.execute(_KEY_PLANS_REUSED)
    yield
    await c.execute(_KEY_PLANS_ENGINE)

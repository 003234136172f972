"""SQLite through aiosqlite: a short statement that cannot wait runs on the event loop's own
thread; anything else takes one thread hand-off per statement instead of four.

Why it exists: aiosqlite runs every sqlite3 call on its own thread, and SQLAlchemy's adapter makes
a separate trip there and back for each step of a statement — create the cursor, execute, fetch
all rows, close. Each trip is a future, a queue put, a wake-up of the worker thread and a
self-pipe wake-up of the event loop: CPU on both threads and, on a busy machine, a scheduling
wait per trip. A demo turn ran ~90 of them for ~23 statements (bench/turn_cost.py).

**One trip** (``_run``): the whole statement — cursor, execute, every row, close — is one
function on aiosqlite's thread. A transaction's ``BEGIN`` / ``BEGIN IMMEDIATE`` (engine.py's
"begin" hook) is not a trip of its own either: it runs first in its first statement's trip
(``OneTripConnection.begin_with``), so it takes SQLite's locks at the same point of the work, and a
transaction that runs no statement sends neither it nor a COMMIT. The rows come back buffered
exactly as the adapter buffered them before (it always fetched everything at once; chatmem never
streams results from SQLite). A commit or rollback with no transaction open on the sqlite3
connection (autocommit blocks, the pool's reset of a connection it takes back) makes no trip.

**No trip** (issue 18: a trip still cost ~0.03–0.06 ms of CPU across the two threads in a
micro-benchmark, more on a loaded box, and a demo turn made ~13): a statement the caller marks *short* — db/hot.py's statements, bounded index-driven point
work (a turn's and an append's reads and writes, at most ``hot.INLINE_ROWS`` rows) — runs right
here, on the event loop's thread, when nothing can make it wait:

- the worker thread is idle: every trip this connection sent has finished (``trips``: sent,
  finished — a trip whose task was cancelled still runs there, and everything after it then
  queues behind it, so the sqlite3 connection is never used by two threads at once; the
  connection is checked out by the one task that awaits its statements, behind the adapter's
  mutex, so nobody else queues work meanwhile);
- the connection runs with ``busy_timeout`` 0 while it works here (``PRAGMA``, ~2 µs, only when
  switching; a trip sets the configured timeout back first), so a lock held elsewhere never
  blocks the loop: SQLite answers SQLITE_BUSY at once, the statement (or the BEGIN) did nothing,
  and it is sent on the thread as before, where it waits on ``busy_timeout``;
- only where that retry is SQLite's own advice (sqlite3_step: a statement outside an explicit
  transaction, a COMMIT, or one that needs no lock it does not hold): a ``BEGIN IMMEDIATE`` and
  its transaction's statements (it holds the write lock: they cannot wait); a read in a deferred
  ``BEGIN`` transaction (WAL: readers never wait on the writer); any statement outside a
  transaction (``read_once``, ``write_once``). A write in a deferred transaction (a lock upgrade)
  takes the thread;
- COMMIT and ROLLBACK here too when every statement of the transaction was short (a long one —
  a fork, an import — may leave megabytes of pages for the COMMIT to write: the thread's);
- only on a connection in WAL mode with SQLite's automatic checkpoint off (engine.py checkpoints
  in the background, ``synchronous=NORMAL``): a COMMIT here then writes WAL frames and never
  fsyncs or checkpoints. In-memory and URI databases keep every statement on the thread
  (``allow_inline``).

Anything else — SQLAlchemy's own ``execute`` (search, forks, imports, every other store
statement), a statement while a trip is queued, a BUSY retry — takes the one trip. Errors are the
same sqlite3 exceptions wherever the statement ran, mapped by the same adapter code; a statement
here has no await, so it cannot be cancelled half-way. Everything else (connect, close,
isolation level) is SQLAlchemy's aiosqlite adapter unchanged.

What it trades: SQLite's own work of those statements is on the loop's thread instead of beside
it (it was on the second core; at the turn's point statements that is microseconds, less than
the hand-off it replaces), and a transaction of short statements runs without yielding: other
tasks (a background answer, a flush) get the loop between transactions, no longer between their
statements.

``Database`` passes ``module=dbapi()`` to ``create_async_engine`` (SQLAlchemy's documented way to
substitute the DBAPI module); the dialect is still ``sqlite+aiosqlite``.
"""

from __future__ import annotations

import collections
import re
import sqlite3
from typing import Any, cast

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

IMMEDIATE = "BEGIN IMMEDIATE"


class _Ran:
    """What the cursor reports once its statement ran (the sqlite3 cursor itself is closed)."""

    __slots__ = ("arraysize", "description", "lastrowid", "rowcount")

    def __init__(self) -> None:
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self.arraysize = 1

    def close(self) -> None:
        pass


def _statement(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> tuple:
    """The statement from cursor to close, rows buffered: (description, rowcount, lastrowid,
    rows)."""
    cur = conn.cursor()
    try:
        if many:
            cur.executemany(operation, parameters)
        elif parameters is None:
            cur.execute(operation)
        else:
            cur.execute(operation, parameters)
        desc = cur.description
        rows = cur.fetchall() if desc else None
        return desc, cur.rowcount, cur.lastrowid, rows
    finally:
        cur.close()


def _run(
    conn: sqlite3.Connection,
    wait_ms: int | None,
    begin: str | None,
    operation: str,
    parameters: Any,
    many: bool,
    trips: list[int],
) -> tuple:
    """On aiosqlite's thread: the configured busy timeout back if the loop's thread had set 0,
    the transaction's deferred BEGIN if any, then the statement."""
    try:
        _patient(conn, wait_ms)
        if begin:
            conn.execute(begin)
        return _statement(conn, operation, parameters, many)
    finally:
        trips[1] += 1  # this thread alone writes it


def _patient(conn: sqlite3.Connection, wait_ms: int | None) -> None:
    """On aiosqlite's thread: the configured busy timeout back if the loop's thread had set 0."""
    if wait_ms is not None:
        conn.execute(f"PRAGMA busy_timeout={int(wait_ms)}")


def _ended(conn: sqlite3.Connection, wait_ms: int | None, trips: list[int], end: Any) -> None:
    """On aiosqlite's thread: ``end`` (the connection's commit or rollback), after the busy
    timeout, as ``_run``."""
    try:
        _patient(conn, wait_ms)
        end()
    finally:
        trips[1] += 1


def _commit(conn: sqlite3.Connection, wait_ms: int | None, trips: list[int]) -> None:
    """On aiosqlite's thread: COMMIT."""
    _ended(conn, wait_ms, trips, conn.commit)


def _rollback(conn: sqlite3.Connection, wait_ms: int | None, trips: list[int]) -> None:
    """On aiosqlite's thread: ROLLBACK."""
    _ended(conn, wait_ms, trips, conn.rollback)


def _busy(error: BaseException) -> bool:
    """SQLITE_BUSY (any extended code): a lock held elsewhere, nothing done."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.OperationalError) and (code or 0) & 0xFF == sqlite3.SQLITE_BUSY


#: a statement that can only read: a SELECT (or WITH … SELECT) naming no writing keyword
_READ = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_WRITES = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_READS_ONLY: dict[str, bool] = {}


def reads_only(operation: str) -> bool:
    """Whether ``operation`` can only read (conservative: a SELECT mentioning ``update`` in a
    string counts as a write)."""
    found = _READS_ONLY.get(operation)
    if found is None:
        found = bool(_READ.match(operation)) and not _WRITES.search(operation)
        if len(_READS_ONLY) < 2000:
            _READS_ONLY[operation] = found
    return found


class OneTripCursor(AsyncAdapt_aiosqlite_cursor):
    __slots__ = ()
    _awaitable_cursor_close = False  # nothing to close on this side: ``_Ran.close``

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = _Ran()  # type: ignore[assignment]
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()

    async def trip(self, operation: Any, parameters: Any, many: bool, short: bool) -> None:
        """Run the statement: here when it is ``short`` and cannot wait
        (``OneTripConnection.inline``), else in one trip to aiosqlite's thread."""
        adapt = cast(OneTripConnection, self._adapt_connection)
        async with adapt._execute_mutex:
            ran = adapt.inline(operation, parameters, many) if short else None
            if ran is None:
                adapt.long = adapt.long or not short
                conn = self._connection
                begin, adapt.begin = adapt.begin, None
                wait_ms = adapt.patient()
                adapt.trips[0] += 1  # this (the event loop's) thread alone writes it
                ran = await conn._execute(
                    _run, conn._conn, wait_ms, begin, operation, parameters, many, adapt.trips
                )
        desc, rowcount, lastrowid, rows = ran
        cursor = cast(_Ran, self._cursor)
        cursor.description, cursor.rowcount, cursor.lastrowid = desc, rowcount, lastrowid
        self._rows = collections.deque(rows) if rows else collections.deque()

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        await self.trip(operation, parameters, False, False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        await self.trip(operation, seq_of_parameters, True, False)


class OneTripConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy commits a block that ran in autocommit mode (``read_once``, ``write_once``) and
    the pool rolls back every connection it takes back: with no transaction open on the sqlite3
    side both are no-ops, and each was still a trip to the worker thread (two per read_once).
    They are skipped when nothing is open **and** no statement of ours is still queued or running
    there (``trips``: sent, finished): a statement still in the queue could open a transaction
    after the check, and the rollback must then follow it in queue order, or the pool would keep
    a connection holding the write lock. (SQLAlchemy already invalidates a connection whose
    statement was cancelled; the count keeps the skip safe without relying on that.) The same
    count says when the loop's thread may use the connection itself (the module's docstring)."""

    __slots__ = ("begin", "busy_ms", "immediate", "inline_ok", "long", "quick", "trips")
    _cursor_cls = OneTripCursor

    def __init__(self, dbapi: Any, connection: Any) -> None:
        super().__init__(dbapi, connection)
        self.trips = [0, 0]  # trips sent to the worker thread, trips it finished
        #: the transaction's BEGIN, sent with its first statement (``begin_with``)
        self.begin: str | None = None
        #: the transaction began with BEGIN IMMEDIATE (holds the write lock once it is sent)
        self.immediate = False
        #: a statement of the transaction was not short (its COMMIT takes the thread)
        self.long = False
        #: short statements may run on the loop's thread (``allow_inline``)
        self.inline_ok = False
        #: the busy timeout SQLite waits on (ms; the engine's), and whether it is set to 0 now
        self.busy_ms = 0
        self.quick = False

    def begin_with(self, statement: str) -> None:
        """Open the transaction with ``statement`` (``BEGIN`` / ``BEGIN IMMEDIATE``) in the trip
        of its first statement, not a trip of its own; a transaction that runs no statement
        never sends it (nor, then, a COMMIT)."""
        self.begin = statement or None
        self.immediate = statement == IMMEDIATE
        self.long = False

    def allow_inline(self) -> bool:
        """Let short statements run on the loop's thread if this connection is in WAL mode with
        SQLite's automatic checkpoint off (the module's docstring); called once, after the
        engine's pragmas. Whether it does."""
        cur = self.cursor()
        cur.execute("SELECT * FROM pragma_journal_mode, pragma_busy_timeout")
        [(mode, busy_ms)] = cur.fetchall()
        cur.execute("PRAGMA wal_autocheckpoint")
        [(autocheckpoint,)] = cur.fetchall()
        cur.close()
        self.busy_ms = int(busy_ms)
        self.inline_ok = str(mode).lower() == "wal" and autocheckpoint == 0
        return self.inline_ok

    def _free(self) -> sqlite3.Connection | None:
        """The sqlite3 connection when the loop's thread may use it now (short statements
        allowed, every trip finished, the connection open); else None."""
        if not self.inline_ok or self.trips[0] != self.trips[1]:
            return None
        aio = self._connection
        if not aio._running:
            return None  # closed: the trip raises what it always raised
        return aio._connection

    def _quick(self, conn: sqlite3.Connection) -> None:
        """Busy timeout 0 before the loop's thread runs anything (kept until the next trip)."""
        if not self.quick:
            conn.execute("PRAGMA busy_timeout=0")
            self.quick = True

    def patient(self) -> int | None:
        """Before a trip: the busy timeout it must set back first (None: it is set)."""
        if not self.quick:
            return None
        self.quick = False
        return self.busy_ms

    def inline(self, operation: str, parameters: Any, many: bool) -> tuple | None:
        """A short statement run on the loop's thread if nothing can make it wait (the module's
        docstring): its ``_statement`` tuple, or None to send it on the thread (a pending BEGIN
        still pending, unless it was sent here)."""
        conn = self._free()
        if conn is None:
            return None
        begin = self.begin
        if begin is not None:
            locks = begin == IMMEDIATE
        elif conn.in_transaction:
            locks = self.immediate  # the write lock is held (BEGIN IMMEDIATE was sent)
        else:
            locks = True  # autocommit: a statement that finds a lock busy did nothing
        if not locks and not reads_only(operation):
            return None  # a write in a deferred transaction: a lock upgrade may wait
        self._quick(conn)
        try:
            if begin is not None:
                conn.execute(begin)
                self.begin = None
            return _statement(conn, operation, parameters, many)
        except sqlite3.OperationalError as error:
            if _busy(error):
                return None  # nothing done: the thread's trip waits on busy_timeout
            self.begin = None
            raise

    def _end(self, commit: bool) -> None:
        """COMMIT or ROLLBACK of an open transaction: here if every statement was short and the
        worker is idle (a BUSY answer retries on the thread), else one trip."""
        conn = None if self.long else self._free()
        if conn is not None:
            try:
                self._quick(conn)
                if commit:
                    conn.commit()
                else:
                    conn.rollback()
                return
            except Exception as error:
                if not _busy(error):
                    self._handle_exception(error)
        aio = self._connection
        if not aio._connection:
            return  # closed: nothing to end (SQLAlchemy's adapter's check)
        wait_ms = self.patient()
        self.trips[0] += 1
        try:
            await_(aio._execute(_commit if commit else _rollback, aio._conn, wait_ms, self.trips))
        except Exception as error:
            self._handle_exception(error)

    def _idle(self) -> bool:
        return self.trips[0] == self.trips[1] and not self._connection._conn.in_transaction

    def commit(self) -> None:
        self.begin = None
        if not self._idle():
            self._end(True)

    def rollback(self) -> None:
        self.begin = None
        if not self._idle():
            self._end(False)


class OneTripDbapi(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        connection = self.aiosqlite.connect(*arg, **kw)
        connection._thread.daemon = True  # as SQLAlchemy's adapter: never blocks exit
        return OneTripConnection(self, await_(connection))


def dbapi() -> OneTripDbapi:
    return OneTripDbapi(aiosqlite, sqlite3)

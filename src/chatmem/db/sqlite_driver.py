"""SQLite through aiosqlite with one thread hand-off per statement instead of four.

Why it exists: aiosqlite runs every sqlite3 call on its own thread, and SQLAlchemy's adapter makes
a separate trip there and back for each step of a statement — create the cursor, execute, fetch
all rows, close. Each trip is a future, a queue put, a wake-up of the worker thread and a
self-pipe wake-up of the event loop: CPU on both threads and, on a busy machine, a scheduling
wait per trip. A demo turn ran ~90 of them for ~23 statements (bench/turn_cost.py).

Here the whole statement is one function run on aiosqlite's thread (``_run``): cursor, execute,
every row, close — one trip. A transaction's ``BEGIN`` / ``BEGIN IMMEDIATE`` (engine.py's
"begin" hook) is not a trip of its own either: it runs first in its first statement's trip
(``OneTripConnection.begin_with``), so it takes SQLite's locks at the same point of the work, and a
transaction that runs no statement sends neither it nor a COMMIT. The rows come back buffered
exactly as the adapter buffered them before (it always fetched everything at once; chatmem never
streams results from SQLite). Errors
are the same sqlite3 exceptions, mapped by the same adapter code. A commit or rollback with no
transaction open on the sqlite3 connection (autocommit blocks, the pool's reset of a connection it
takes back) makes no trip at all. Everything else (connect, close, isolation level, a real commit
or rollback) is SQLAlchemy's aiosqlite adapter unchanged.

``Database`` passes ``module=dbapi()`` to ``create_async_engine`` (SQLAlchemy's documented way to
substitute the DBAPI module); the dialect is still ``sqlite+aiosqlite``.
"""

from __future__ import annotations

import collections
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


class _Ran:
    """What the cursor reports once its statement ran on the worker thread (the sqlite3 cursor
    itself is closed there)."""

    __slots__ = ("arraysize", "description", "lastrowid", "rowcount")

    def __init__(self) -> None:
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self.arraysize = 1

    def close(self) -> None:
        pass


def _run(
    conn: sqlite3.Connection,
    begin: str | None,
    operation: str,
    parameters: Any,
    many: bool,
    trips: list[int],
) -> tuple:
    """On aiosqlite's thread: the transaction's deferred BEGIN if any, then the statement from
    cursor to close, rows buffered."""
    try:
        if begin:
            conn.execute(begin)
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
    finally:
        trips[1] += 1  # this thread alone writes it


class OneTripCursor(AsyncAdapt_aiosqlite_cursor):
    __slots__ = ()
    _awaitable_cursor_close = False  # nothing to close on this side: ``_Ran.close``

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = _Ran()  # type: ignore[assignment]
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()

    async def _trip(self, operation: Any, parameters: Any, many: bool) -> None:
        adapt = cast(OneTripConnection, self._adapt_connection)
        async with adapt._execute_mutex:
            conn = self._connection
            adapt.trips[0] += 1  # this (the event loop's) thread alone writes it
            begin, adapt.begin = adapt.begin, None
            desc, rowcount, lastrowid, rows = await conn._execute(
                _run, conn._conn, begin, operation, parameters, many, adapt.trips
            )
        ran = cast(_Ran, self._cursor)
        ran.description, ran.rowcount, ran.lastrowid = desc, rowcount, lastrowid
        self._rows = collections.deque(rows) if rows else collections.deque()

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        await self._trip(operation, parameters, False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        await self._trip(operation, seq_of_parameters, True)


class OneTripConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy commits a block that ran in autocommit mode (``read_once``, ``write_once``) and
    the pool rolls back every connection it takes back: with no transaction open on the sqlite3
    side both are no-ops, and each was still a trip to the worker thread (two per read_once).
    They are skipped when nothing is open **and** no statement of ours is still queued or running
    there (``trips``: sent, finished): a statement still in the queue could open a transaction
    after the check, and the rollback must then follow it in queue order, or the pool would keep
    a connection holding the write lock. (SQLAlchemy already invalidates a connection whose
    statement was cancelled; the count keeps the skip safe without relying on that.)"""

    __slots__ = ("begin", "trips")
    _cursor_cls = OneTripCursor

    def __init__(self, dbapi: Any, connection: Any) -> None:
        super().__init__(dbapi, connection)
        self.trips = [0, 0]  # statements sent to the worker thread, statements it finished
        #: the transaction's BEGIN, sent with its first statement (``begin_with``)
        self.begin: str | None = None

    def begin_with(self, statement: str) -> None:
        """Open the transaction with ``statement`` (``BEGIN`` / ``BEGIN IMMEDIATE``) in the trip
        of its first statement, not a trip of its own; a transaction that runs no statement
        never sends it (nor, then, a COMMIT)."""
        self.begin = statement or None

    def _idle(self) -> bool:
        return self.trips[0] == self.trips[1] and not self._connection._conn.in_transaction

    def commit(self) -> None:
        self.begin = None
        if not self._idle():
            super().commit()

    def rollback(self) -> None:
        self.begin = None
        if not self._idle():
            super().rollback()


class OneTripDbapi(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        connection = self.aiosqlite.connect(*arg, **kw)
        connection._thread.daemon = True  # as SQLAlchemy's adapter: never blocks exit
        return OneTripConnection(self, await_(connection))


def dbapi() -> OneTripDbapi:
    return OneTripDbapi(aiosqlite, sqlite3)

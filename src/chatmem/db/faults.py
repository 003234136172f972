"""What a database error means (no framework): transient — worth a retry, or a 503 the client
may retry — or the safety nets behind request validation; and retrying with backoff.

Transient: a connection that died (reset, ``pg_terminate_backend``, a failover, a restart, the
pool could not connect), PostgreSQL's serialization failures and deadlocks (class 40), "cannot
connect now" and "too many connections", and SQLite's "database is locked / busy" (another
process held the write lock past ``busy_timeout``). Everything else (constraint violations,
programming errors) is not: retrying would fail the same way.

Users never see driver text: ``api_error`` gives a stable code (``database_unavailable``) and
message; the driver's text goes to the log only.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy import exc as sa_exc

from ..errors import ApiError, ServiceUnavailable, Unprocessable

log = logging.getLogger("chatmem.db")
T = TypeVar("T")

#: SQLSTATE classes/codes after which the same statement may well succeed.
TRANSIENT_SQLSTATE_PREFIXES = ("08", "40")  # connection exceptions; transaction rollback
TRANSIENT_SQLSTATES = {"57P01", "57P02", "57P03", "53300", "55P03"}  # shutdowns, no slots, lock
SQLITE_TRANSIENT = ("database is locked", "database table is locked", "database is busy")
TRANSIENT_TYPES = (ConnectionError, TimeoutError, asyncio.TimeoutError)


def _chain(start: BaseException):
    exc: BaseException | None = start
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        nxt = getattr(exc, "orig", None)
        if not isinstance(nxt, BaseException) or id(nxt) in seen:
            nxt = exc.__cause__ or exc.__context__
        exc = nxt


def _closed_connection(e: BaseException) -> bool:
    """asyncpg's (or SQLAlchemy's adapted) "the connection was closed under us" errors; not
    its other interface errors ("another operation is in progress" is a bug, not a fault)."""
    name, module = type(e).__name__, type(e).__module__
    if not module.startswith(("asyncpg", "sqlalchemy")):
        return False
    if name in ("ConnectionDoesNotExistError", "ConnectionFailureError"):
        return True
    return name == "InterfaceError" and "closed" in str(e)


#: asyncpg's words for a connection whose protocol was left mid-operation by a dying peer.
BROKEN_PROTOCOL = ("another operation is in progress", "cannot switch to state")


def broken_connection(exc: BaseException) -> bool:
    """A connection that must not go back to the pool: closed under us, or left mid-operation."""
    for e in _chain(exc):
        if _closed_connection(e) or any(m in str(e) for m in BROKEN_PROTOCOL):
            return True
        state = getattr(e, "sqlstate", None)
        if isinstance(state, str) and (state.startswith("08") or state in ("57P01", "57P02")):
            return True
    return False


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (any exception a database call raised) is worth retrying."""
    for e in _chain(exc):
        if isinstance(e, sa_exc.DBAPIError) and e.connection_invalidated:
            return True
        if isinstance(e, (sa_exc.TimeoutError, sa_exc.DisconnectionError)):
            return True  # pool checkout timed out; a connection was found dead
        if isinstance(e, sa_exc.PendingRollbackError):
            return True  # the connection was invalidated inside this transaction
        if any(m in str(e) for m in BROKEN_PROTOCOL):
            return True
        state = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
        if isinstance(state, str) and (
            state in TRANSIENT_SQLSTATES or state.startswith(TRANSIENT_SQLSTATE_PREFIXES)
        ):
            return True
        if _closed_connection(e):
            return True
        if isinstance(e, TRANSIENT_TYPES):
            return True
        if type(e).__module__ == "sqlite3" and any(m in str(e) for m in SQLITE_TRANSIENT):
            return True
    return False


def _is_nul(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc))
    return "0x00" in text or "\\u0000" in text


def api_error(exc: BaseException) -> ApiError | None:
    """The user-facing error for a database (or encoding) failure that escaped a service, or
    None when it is a bug (a 500, logged with its traceback)."""
    if isinstance(exc, UnicodeEncodeError):
        return Unprocessable("text must not contain lone UTF-16 surrogates")
    if isinstance(exc, sa_exc.DBAPIError) and _is_nul(exc):
        # PostgreSQL refuses NUL in text; the transaction was rolled back: nothing written
        return Unprocessable("text must not contain NUL characters")
    if is_transient(exc):
        log.warning("database unavailable: %s: %s", type(exc).__name__, exc)
        return ServiceUnavailable(
            "the database is briefly unavailable; retry the request",
            code="database_unavailable",
            headers={"Retry-After": "1"},
        )
    return None


async def retrying(
    fn: Callable[[], Awaitable[T]],
    *,
    what: str,
    attempts: int = 6,
    base_s: float = 0.05,
    max_s: float = 2.0,
    deadline_s: float | None = None,
) -> T:
    """``await fn()``, again after a transient failure with exponential backoff and jitter
    (``base_s`` · 2^n, at most ``max_s``), up to ``attempts`` tries or ``deadline_s`` seconds;
    the last failure (or a non-transient one) propagates. ``fn`` must be safe to repeat: its
    transaction either committed or rolled back, and a repeat must notice which (see the
    callers in generation/)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    n = 0
    while True:
        n += 1
        try:
            return await fn()
        except Exception as e:
            if not is_transient(e):
                raise
            spent = loop.time() - start
            if n >= attempts or (deadline_s is not None and spent >= deadline_s):
                raise
            delay = min(max_s, base_s * 2 ** (n - 1)) * (0.5 + random.random() / 2)
            log.warning("%s: transient database error (try %d): %s", what, n, type(e).__name__)
            await asyncio.sleep(delay)

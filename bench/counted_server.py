"""A ``chatmem serve`` process that counts its own work, for the benchmarks (never shipped).

Runs the real application (``create_app``) under uvicorn with SQLAlchemy event listeners that
count every statement and transaction the process executes, and one extra route,
``GET /__bench/stats``, answering ``{"statements", "transactions", "round_trips", "cpu_s",
"by_statement", "by_round_trip"}`` (``cpu_s`` = this process's user + system CPU time;
``round_trips``: PostgreSQL's, counted on asyncpg's calls that wait for the server — a simple
query (BEGIN, COMMIT, ROLLBACK, a ping), a prepared statement's execution, a prepare). A benchmark reads it before and after a
series of turns and divides: statements, transactions and server CPU per turn, exactly.

    python bench/counted_server.py --port 8123      # settings from CHATMEM_* as for serve
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import sys
import time

import greenlet
import uvicorn
from sqlalchemy import event
from sqlalchemy.engine import Engine

from chatmem.app import create_app
from chatmem.config import get_settings
from chatmem.db.migrate import upgrade
from chatmem.observability import logs

COUNTS = {"statements": 0, "transactions": 0, "round_trips": 0}
BY_STATEMENT: collections.Counter[str] = collections.Counter()
BY_ROUND_TRIP: collections.Counter[str] = collections.Counter()
TRACE = bool(os.environ.get("CHATMEM_BENCH_TRACE"))
PROFILE: list = [] if os.environ.get("CHATMEM_BENCH_PROFILE") else None  # type: ignore[assignment]


#: statement text → its one-line key (a turn runs the same few prebuilt statements: normalising
#: each anew was the bench's own CPU, counted in the figure it reports)
_KEYS: dict[str, str] = {}


@event.listens_for(Engine, "before_cursor_execute")
def _count_statement(conn, cursor, statement, parameters, context, executemany):
    COUNTS["statements"] += 1
    key = _KEYS.get(statement)
    if key is None:
        key = " ".join(statement.split())[:120]
        if len(_KEYS) < 10_000:
            _KEYS[statement] = key
    if TRACE:  # which chatmem function ran it (slow: diagnostics only)
        key = f"{_caller()}  {key[:60]}"
    BY_STATEMENT[key] += 1


def _ours(path: str) -> bool:
    return "/chatmem/" in path and "/chatmem/db/" not in path


def _caller() -> str:
    """The innermost chatmem functions on the stack (the statement's author and its caller).

    SQLAlchemy's async layer runs the statement in a greenlet: its frames end where the greenlet
    started, and the awaiting coroutines' frames hang below the parent greenlet's switch point."""
    names: list[str] = []
    frame = sys._getframe(2)
    gr = greenlet.getcurrent()
    while frame is not None and len(names) < 2:
        path = frame.f_code.co_filename
        if _ours(path):
            names.append(f"{path.split('chatmem/')[-1]}:{frame.f_code.co_name}")
        frame = frame.f_back
        if frame is None and gr is not None and gr.parent is not None:
            gr = gr.parent
            frame = gr.gr_frame
    return " < ".join(names) if names else "?"


@event.listens_for(Engine, "commit")
def _count_commit(conn):
    COUNTS["transactions"] += 1


@event.listens_for(Engine, "rollback")
def _count_rollback(conn):
    COUNTS["transactions"] += 1


def _count_round_trips() -> None:
    """Wrap asyncpg's waiting calls (PostgreSQL round trips) with a counter by kind."""
    try:
        from asyncpg.connection import Connection
        from asyncpg.prepared_stmt import PreparedStatement
    except ImportError:  # pragma: no cover - SQLite-only install
        return

    def counted(fn, kind_of):
        async def wrapper(self, *args, **kw):
            kind = kind_of(args)
            COUNTS["round_trips"] += 1
            BY_ROUND_TRIP[kind] += 1
            return await fn(self, *args, **kw)

        return wrapper

    def simple(args):  # Connection.execute: a simple query (no arguments) or a statement
        if len(args) > 1:
            return "statement"
        word = str(args[0]).split(None, 1)[0].rstrip(";").upper() if args else "?"
        return "ping" if word == "SELECT" else word.lower()

    Connection.execute = counted(Connection.execute, simple)  # type: ignore[method-assign]
    Connection.executemany = counted(Connection.executemany, lambda a: "statement")  # type: ignore[method-assign]
    Connection.prepare = counted(Connection.prepare, lambda a: "prepare")  # type: ignore[method-assign]
    PreparedStatement.fetch = counted(PreparedStatement.fetch, lambda a: "statement")  # type: ignore[method-assign]


_count_round_trips()


def build():
    s = get_settings()
    upgrade(s.database_url)
    app = create_app(s)

    @app.get("/__bench/stats", include_in_schema=False)
    async def stats(detail: bool = False):
        out = {**COUNTS, "cpu_s": time.process_time()}
        if detail:
            out["by_statement"] = dict(BY_STATEMENT.most_common())
            out["by_round_trip"] = dict(BY_ROUND_TRIP.most_common())
        return out

    @app.post("/__bench/reset", include_in_schema=False)
    async def reset():
        BY_STATEMENT.clear()
        BY_ROUND_TRIP.clear()
        if PROFILE is not None:
            PROFILE.clear()
            PROFILE.append(cProfile.Profile(time.process_time))  # CPU, not waits
            PROFILE[0].enable()
        return {}

    @app.post("/__bench/profile", include_in_schema=False)
    async def profile(path: str):
        if PROFILE is not None:
            PROFILE[0].disable() if PROFILE else None
            PROFILE[0].dump_stats(path) if PROFILE else None
        return {}

    return s, app


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    s = get_settings()
    # as ``chatmem serve``: its handler, its cost — and before the app is built, whose MCP server
    # would otherwise put a (slow) Rich handler on the root logger (logging.basicConfig)
    logs.configure(s.log_level, s.log_format)
    s, app = build()
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        log_config=None,
        log_level=s.log_level,
        access_log=False,
        proxy_headers=False,
    )


if __name__ == "__main__":
    main()

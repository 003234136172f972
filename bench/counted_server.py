"""A ``chatmem serve`` process that counts its own work, for the benchmarks (never shipped).

Runs the real application (``create_app``) under uvicorn with SQLAlchemy event listeners that
count every statement and transaction the process executes, and one extra route,
``GET /__bench/stats``, answering ``{"statements", "transactions", "cpu_s", "by_statement"}``
(``cpu_s`` = this process's user + system CPU time). A benchmark reads it before and after a
series of turns and divides: statements, transactions and server CPU per turn, exactly.

    python bench/counted_server.py --port 8123      # settings from CHATMEM_* as for serve
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import os
import time

import uvicorn
from sqlalchemy import event
from sqlalchemy.engine import Engine

from chatmem.app import create_app
from chatmem.config import get_settings
from chatmem.db.migrate import upgrade

COUNTS = {"statements": 0, "transactions": 0}
BY_STATEMENT: collections.Counter[str] = collections.Counter()
TRACE = bool(os.environ.get("CHATMEM_BENCH_TRACE"))
PROFILE: list = [] if os.environ.get("CHATMEM_BENCH_PROFILE") else None  # type: ignore[assignment]


@event.listens_for(Engine, "before_cursor_execute")
def _count_statement(conn, cursor, statement, parameters, context, executemany):
    COUNTS["statements"] += 1
    key = " ".join(statement.split())[:120]
    if TRACE:  # which chatmem function ran it (slow: diagnostics only)
        key = f"{_caller()}  {key[:70]}"
    BY_STATEMENT[key] += 1


def _ours(path: str) -> bool:
    return "/chatmem/" in path and "/chatmem/db/" not in path


def _caller() -> str:
    """The innermost chatmem coroutine of the running task (the statement's author)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return "?"
    names = []
    coro = task.get_coro() if task is not None else None
    while coro is not None:
        code = getattr(coro, "cr_code", None) or getattr(coro, "ag_code", None)
        if code is not None and _ours(code.co_filename):
            names.append(f"{code.co_filename.split('chatmem/')[-1]}:{code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)
    return names[-1] if names else "?"


@event.listens_for(Engine, "commit")
def _count_commit(conn):
    COUNTS["transactions"] += 1


@event.listens_for(Engine, "rollback")
def _count_rollback(conn):
    COUNTS["transactions"] += 1


def build():
    s = get_settings()
    upgrade(s.database_url)
    app = create_app(s)

    @app.get("/__bench/stats", include_in_schema=False)
    async def stats(detail: bool = False):
        out = {**COUNTS, "cpu_s": time.process_time()}
        if detail:
            out["by_statement"] = dict(BY_STATEMENT.most_common())
        return out

    @app.post("/__bench/reset", include_in_schema=False)
    async def reset():
        BY_STATEMENT.clear()
        if PROFILE is not None:
            PROFILE.clear()
            PROFILE.append(cProfile.Profile())
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
    s, app = build()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", proxy_headers=False)


if __name__ == "__main__":
    main()

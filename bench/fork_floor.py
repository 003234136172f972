"""Benchmark: where a 10,000-message fork's time goes, and the floor of copying the rows at all.

Issue 18 asks a fork of 10,000 messages in ≤ 0.2 s. A fork copies the path in ONE
``INSERT … SELECT`` (conversations/tree_store.copy_path). This bench builds the same 10,000-deep
conversation as bench/scale.py, captures that statement as the fork runs it, then replays it in
transactions that are rolled back, interleaved one-for-one, with parts of the table's machinery
taken away inside the transaction:

  SQLite      as the fork runs it; without foreign-key checks (``PRAGMA foreign_keys=OFF``);
              without the full-text trigger; without both; and with only the primary key left
              (no secondary index either) — the floor of writing the rows; the SELECT alone.
  PostgreSQL  as the fork runs it (``plan_cache_mode = auto``); with the engine's
              ``force_custom_plan`` (each FK check re-planned); with each copy's text parsed
              again (the ``search_tsv`` trigger made to fire for every row, as the generated
              column of the code before migration 0021 did); without FK checks
              (``session_replication_role = replica``: needs a superuser, else skipped); also
              without the GIN index; the primary key only; the SELECT alone.

``--text-chars N`` gives the 10,000-deep path's messages texts of about N characters (a
realistic answer is several hundred) instead of bench/scale.py's ``m<depth>``: parsing and
indexing grow with the text, the rest does not.

It prints medians in ms. The commit (and SQLite's WAL checkpoint, now in the background) and the
fork's other statements are not in these figures: bench/scale.py times the whole fork.

    .venv/bin/python bench/fork_floor.py [--reps 7] [--text-chars 0]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import make_url

import scale
from chatmem.conversations import service
from chatmem.conversations.wire import ForkIn
from chatmem.db.engine import Database
from chatmem.db.fulltext import register_sqlite_functions
from chatmem.db.migrate import upgrade
from pgtemp import temp_database

SECONDARY = (
    "idx_messages_parent",
    "idx_messages_conv_created",
    "idx_messages_role_created",
    "idx_messages_model_role_created",
    "idx_messages_conv_parent",
    "idx_messages_user_status",
    "idx_messages_streaming",
)
NO_FTS_SQLITE = ["DROP TRIGGER messages_fts_ai"]
NO_FK_PG = ["SET LOCAL session_replication_role = replica"]
NO_GIN = ["DROP INDEX idx_messages_fts"]
#: the insert trigger without its WHEN: every copy's vector computed from its text again
REPARSE = [
    "DROP TRIGGER messages_search_tsv_insert ON messages",
    "CREATE TRIGGER messages_search_tsv_insert BEFORE INSERT ON messages FOR EACH ROW "
    "EXECUTE FUNCTION chatmem_messages_search_tsv()",
]
PK_ONLY = [f"DROP INDEX {i}" for i in (*SECONDARY, "idx_messages_user_recent")]

#: label -> (statements run first in the transaction, run the SELECT alone?, foreign keys on?)
SQLITE = {
    "as the fork runs it": ([], False, True),
    "without FK checks": ([], False, False),
    "without the FTS trigger": (NO_FTS_SQLITE, False, True),
    "without FK checks and FTS trigger": (NO_FTS_SQLITE, False, False),
    "  and primary key only (floor)": (
        NO_FTS_SQLITE + [f"DROP INDEX {i}" for i in SECONDARY],
        False,
        False,
    ),
    "the SELECT alone": ([], True, True),
}
PG = {
    "as the fork runs it (plan_cache_mode auto)": (["SET LOCAL plan_cache_mode = auto"], False),
    "with force_custom_plan (the engine's)": (
        ["SET LOCAL plan_cache_mode = force_custom_plan"],
        False,
    ),
    "each copy's text parsed again (before 0021)": (
        ["SET LOCAL plan_cache_mode = auto", *REPARSE],
        False,
    ),
    "without FK checks": (NO_FK_PG, False),
    "  and without the GIN index": (NO_FK_PG + NO_GIN, False),
    "  and primary key only (floor)": (NO_FK_PG + NO_GIN + PK_ONLY, False),
    "the SELECT alone": ([], True),
}


#: the words of ``--text-chars`` texts (each message's also carries its depth: no two alike)
WORDS = (
    "the quick brown fox jumps over the lazy dog and then explains at length how recursive "
    "common table expressions work why inverted indexes matter and what the user asked about "
    "their travel plans to Lisbon next spring "
)


def use_texts(chars: int) -> None:
    """Make bench/scale.py's messages carry texts of about ``chars`` characters (0: its own)."""
    if chars <= 0:
        return
    plain = scale._msg

    def _msg(*args, **kw):
        row = plain(*args, **kw)
        words = f"{row['search_text']} {WORDS * (chars // len(WORDS) + 1)}"[:chars]
        row["search_text"] = words
        row["blocks"] = [{"kind": "text", "text": words}]
        return row

    scale._msg = _msg


class _Captured(Exception):
    pass


async def capture(url: str) -> tuple[tuple, tuple]:
    """(conversation INSERT, path INSERT … SELECT) of one fork, as (sql, params) — not run."""
    db = Database(url)
    got: dict = {}

    @event.listens_for(db.engine.sync_engine, "before_cursor_execute")
    def _grab(conn, cursor, stmt, params, context, many):
        if stmt.lstrip().startswith("INSERT INTO conversations"):
            got["conv"] = (stmt, params)
        if stmt.startswith("WITH RECURSIVE") and "INSERT INTO messages" in stmt:
            got["copy"] = (stmt, params)
            raise _Captured

    try:
        state = await scale.fill(db, 10_000)
        try:
            await service.fork(db, state["p"], state["deep"], ForkIn())
        except Exception as exc:  # the capture aborts the fork (wrapped by SQLAlchemy)
            if "copy" not in got:
                raise exc
    finally:
        await db.dispose()
    return got["conv"], got["copy"]


def _select_alone(sql: str) -> str:
    """The statement's SELECT, counted instead of inserted."""
    with_part, rest = sql.split("INSERT INTO messages (", 1)
    return f"{with_part} SELECT count(*) FROM (SELECT {rest.split(') SELECT ', 1)[1]}) AS q"


def run_sqlite(reps: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/floor.db"
        upgrade(f"sqlite:///{path}")
        conv, copy = asyncio.run(capture(f"sqlite:///{path}"))
        con = sqlite3.connect(path, isolation_level=None)
        register_sqlite_functions(con)
        con.execute("PRAGMA journal_mode=WAL")
        out: dict[str, list[float]] = {k: [] for k in SQLITE}
        for _ in range(reps):
            for label, (pre, alone, fks) in SQLITE.items():
                con.execute(f"PRAGMA foreign_keys={'ON' if fks else 'OFF'}")
                con.execute("BEGIN")
                for s in pre:
                    con.execute(s)
                con.execute(*conv)
                t0 = time.perf_counter()
                if alone:
                    con.execute(_select_alone(copy[0]), copy[1]).fetchall()
                else:
                    con.execute(*copy)
                out[label].append(time.perf_counter() - t0)
                con.execute("ROLLBACK")
        con.close()
    return out


async def run_pg(reps: int) -> dict[str, list[float]] | None:
    async with temp_database("chatmem_fork_floor") as url:
        if url is None:
            return None
        conv, copy = await capture(url)
        u = make_url(url)
        con = await asyncpg.connect(
            host=u.host, port=u.port, user=u.username, password=u.password, database=u.database
        )
        try:
            await con.execute("ANALYZE")
            superuser = await con.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = user")
            cases = {k: v for k, v in PG.items() if superuser or v[0][:1] != NO_FK_PG[:1]}
            out: dict[str, list[float]] = {k: [] for k in cases}
            for _ in range(reps):
                for label, (pre, alone) in cases.items():
                    tr = con.transaction()
                    await tr.start()
                    for s in pre:
                        await con.execute(s)
                    await con.execute(conv[0], *conv[1])
                    t0 = time.perf_counter()
                    if alone:
                        await con.fetchval(_select_alone(copy[0]), *copy[1])
                    else:
                        await con.execute(copy[0], *copy[1])
                    out[label].append(time.perf_counter() - t0)
                    await tr.rollback()
            return out
        finally:
            await con.close()


def report(name: str, out: dict[str, list[float]]) -> None:
    print(f"\n{name}: the fork's INSERT … SELECT of 10,000 messages, median ms")
    for label, xs in out.items():
        print(f"  {label:<46} {statistics.median(xs) * 1e3:8.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--sqlite-only", action="store_true")
    ap.add_argument("--text-chars", type=int, default=0)
    args = ap.parse_args()
    use_texts(args.text_chars)
    report("SQLite", run_sqlite(args.reps))
    if not args.sqlite_only:
        out = asyncio.run(run_pg(args.reps))
        if out is None:
            print(
                "\nPostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL)"
            )
        else:
            report("PostgreSQL", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

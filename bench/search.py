"""Search benchmark: ``GET /api/search`` with 10k vs 1M messages, through a real server.

The corpus is bulk-loaded (``build``: SQLite row inserts whose index triggers index every row as
for rows written by the API; PostgreSQL ``COPY`` with the indexes built afterwards, the generated
``search_tsv`` computed by the server as on any insert — the same rows and index answers as row
by row inserts, checked on a sample; 1M messages in ~2–3 min, 3,058 s before); the queries go
through the public API of a live ``chatmem serve``. Two shapes, each at 10k and at 1M messages:

- **own** — the searching user wrote every message (the hardest case: one user's history grows);
- **crowd** — the user has 10k messages, other users the rest (what a shared server looks like).

Queries: a rare word, a common word (in ~20 % of messages), two words, a prefix while typing, and a
Chinese word. Prints the median latency of each at both sizes and the ratio 1M / 10k (target ≤ 3).

Usage: ``.venv/bin/python bench/search.py [--small 10000] [--large 1000000] [--postgres]
[--keep DIR]``. ``--keep`` keeps the four databases and reuses them on the next run (migrated to
the current schema first), so the 1M corpus is built once while comparing changes: SQLite files in
DIR; with ``--postgres`` databases named ``chatmem_benchsearch_<shape>_<size>`` on the server,
their keys in DIR — ``--drop`` drops them (the server is shared: drop them when done).
``--baseline SRC`` serves each database with a second code tree too (``PYTHONPATH=SRC``; its schema
must be the same), in the same loop: before and after on one corpus, under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sqlalchemy.engine import make_url  # noqa: E402
from tests.servers import Server, create_user  # noqa: E402

from chatmem.db.fulltext import register_sqlite_functions  # noqa: E402
from chatmem.db.ids import new_id  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402
from pgtemp import server_url, temp_database  # noqa: E402

WORDS = (
    "the weather was lovely and we walked along the river talking about work family travel "
    "books music dinner plans weekend garden coffee friends city train holiday"
).split()
COMMON = "garden"  # placed in ~20 % of messages
QUERIES = {
    "rare": "zanzibar",
    "common": COMMON,
    "two words": "garden zanzibar",
    "prefix": "zanzi",
    "chinese": "北京",
}


def _text(r: random.Random, i: int) -> str:
    words = r.choices(WORDS, k=r.randint(8, 30))
    if i % 5 == 0:
        words.append(COMMON)
    if i % 997 == 0:
        words.append("zanzibar")
    if i % 1009 == 0:
        words.append("我住在北京")
    return " ".join(words)


def _corpus(total: int, own: int, me: str, others: list[str], now: int):
    """The corpus in batches of (conversations, messages) rows, as tuples in the column order of
    ``CONV_COLS`` and ``MSG_COLS``: ``own`` messages in the searcher's conversations, the rest in
    other users', 100 messages per conversation, created oldest first (the same texts, order and
    times for a given size however it is written)."""
    r = random.Random(7)
    made = 0
    while made < total:
        convs, msgs = [], []
        for _ in range(BATCH_CONVERSATIONS):
            if made >= total:
                break
            owner = me if made < own else others[(made - own) // 10_000 % len(others)]
            conv = new_id("c")
            convs.append((conv, owner, "b", now, now))
            for d in range(min(100, total - made)):
                text = _text(r, made)
                blocks = json.dumps([{"kind": "text", "text": text}])
                msgs.append(
                    (new_id("msg"), conv, "user", owner, blocks, text, now - (total - made), d)
                )
                made += 1
        yield convs, msgs


CONV_COLS = ("id", "user_id", "title", "created_at", "updated_at")
MSG_COLS = (
    "id",
    "conversation_id",
    "role",
    "user_id",
    "blocks",
    "search_text",
    "created_at",
    "depth",
)
BATCH_CONVERSATIONS = 500  # 50,000 messages per batch


async def build(db_url: str, total: int, own: int) -> str:
    """Create the searching user (key returned) and bulk-load ``total`` messages, ``own`` of
    them in that user's conversations (100 messages each).

    Rows go in as the app's own inserts would leave them, only faster: on SQLite one
    ``executemany`` per 50,000 rows on a plain connection, the index triggers firing as for any
    insert; on PostgreSQL ``COPY`` with the messages' secondary indexes dropped first and created
    again from their own definitions afterwards (``search_tsv`` is a generated column: the
    server computes it on every copied row exactly as on an INSERT), foreign keys not checked
    row by row (the loader writes only rows whose parents it wrote), then ``ANALYZE``. A 1M
    PostgreSQL corpus took 3,058 s with row inserts and index maintenance per row."""
    key = create_user(db_url, "searcher@example.com")
    now = int(time.time() * 1000)
    others = [new_id("u") for _ in range(max(1, (total - own) // 10_000))]
    if db_url.startswith("sqlite"):
        await asyncio.to_thread(_load_sqlite, db_url, total, own, others, now)
    else:
        await _load_pg(db_url, total, own, others, now)
    return key


def _load_sqlite(db_url: str, total: int, own: int, others: list[str], now: int) -> None:
    con = sqlite3.connect(make_url(db_url).database, isolation_level=None)
    try:
        register_sqlite_functions(con)
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA synchronous=OFF")
        me = con.execute(
            "SELECT id FROM users WHERE email = ?", ("searcher@example.com",)
        ).fetchone()[0]
        con.execute("BEGIN")
        con.executemany(
            "INSERT INTO users (id, email, created_at, updated_at) VALUES (?, ?, 0, 0)",
            [(u, f"o{k}@x.y") for k, u in enumerate(others)],
        )
        con.execute("COMMIT")
        conv_sql = _insert_sql("conversations", CONV_COLS, "?")
        msg_sql = _insert_sql("messages", MSG_COLS, "?")
        for convs, msgs in _corpus(total, own, me, others, now):
            con.execute("BEGIN")
            con.executemany(conv_sql, convs)
            con.executemany(msg_sql, msgs)
            con.execute("COMMIT")
    finally:
        con.close()


def _insert_sql(table: str, cols: tuple[str, ...], mark: str) -> str:
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(mark for _ in cols)})"


async def _load_pg(db_url: str, total: int, own: int, others: list[str], now: int) -> None:
    u = make_url(db_url)
    con = await asyncpg.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database=u.database,
    )
    try:
        me = await con.fetchval("SELECT id FROM users WHERE email = 'searcher@example.com'")
        await con.executemany(
            "INSERT INTO users (id, email, created_at, updated_at) VALUES ($1, $2, 0, 0)",
            [(uid, f"o{k}@x.y") for k, uid in enumerate(others)],
        )
        indexes = await con.fetch(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = 'messages' "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
        )
        for ix in indexes:
            await con.execute(f'DROP INDEX "{ix["indexname"]}"')
        await con.execute("SET session_replication_role = replica")  # no per-row FK triggers
        for convs, msgs in _corpus(total, own, me, others, now):
            await con.copy_records_to_table("conversations", records=convs, columns=CONV_COLS)
            await con.copy_records_to_table("messages", records=msgs, columns=MSG_COLS)
        await con.execute("RESET session_replication_role")
        await con.execute("SET maintenance_work_mem = '512MB'")
        for ix in indexes:
            await con.execute(ix["indexdef"])
        await con.execute("VACUUM ANALYZE")
    finally:
        await con.close()


def measure(
    targets: list[tuple[str, str]], repeats: int, baseline: str | None = None
) -> list[dict[str, float]]:
    """Median latency of each query on each (database, key), the databases' servers queried in
    turn inside one loop so machine noise hits both sides of a ratio alike. With ``baseline``
    (another checkout's ``src``) each database is also served by that code, in the same loop:
    results for the targets, then for the targets under the baseline."""
    envs = [{}] + ([{"PYTHONPATH": baseline}] if baseline else [])
    servers = [
        Server(url, env_extra=env, args=("--no-worker",)).start()
        for env in envs
        for url, _ in targets
    ]
    keys = [key for _ in envs for _, key in targets]
    try:
        clients = [
            httpx.Client(base_url=srv.base, headers={"Authorization": f"Bearer {key}"}, timeout=120)
            for srv, key in zip(servers, keys, strict=True)
        ]
        times: list[dict[str, list[float]]] = [{q: [] for q in QUERIES} for _ in servers]
        for cl in clients:
            for q in QUERIES.values():
                cl.get("/api/search", params={"q": q}).raise_for_status()  # warm
        for _ in range(repeats):
            for name, q in QUERIES.items():
                for i, cl in enumerate(clients):
                    t0 = time.perf_counter()
                    cl.get("/api/search", params={"q": q}).raise_for_status()
                    times[i][name].append((time.perf_counter() - t0) * 1000)
        for cl in clients:
            cl.close()
        return [{q: statistics.median(v) for q, v in t.items()} for t in times]
    finally:
        for srv in servers:
            srv.stop()


async def run(args) -> None:
    for shape in args.shapes.split(","):
        async with AsyncExitStack() as stack:
            targets = []
            for n in (args.small, args.large):
                if args.keep:
                    kept = _kept_pg if args.postgres else _kept
                    targets.append(await kept(Path(args.keep), shape, n, args.small))
                    continue
                db_url = await stack.enter_async_context(
                    temp_database("chatmem_search") if args.postgres else _sqlite()
                )
                if db_url is None:
                    raise SystemExit("--postgres needs CHATMEM_TEST_POSTGRES_URL")
                targets.append((db_url, await _build_timed(db_url, shape, n, args.small)))
            medians = await asyncio.to_thread(measure, targets, args.repeats, args.baseline)
        pairs = [medians[i : i + 2] for i in range(0, len(medians), 2)]
        for label, (small, large) in zip(("", " (baseline)"), pairs, strict=False):
            print(f"\n{shape}{label}: {'query':<10}{args.small:>12,}{args.large:>12,}   ratio")
            for q in QUERIES:
                a, b = small[q], large[q]
                print(f"  {q:<14}{a:>9.1f} ms{b:>9.1f} ms   {b / a:5.2f}")


async def _build_timed(db_url: str, shape: str, n: int, small: int) -> str:
    t0 = time.perf_counter()
    key = await build(db_url, n, n if shape == "own" else small)
    print(f"  [{shape}] built {n:,} messages in {time.perf_counter() - t0:.0f}s")
    return key


async def _kept(folder: Path, shape: str, n: int, small: int) -> tuple[str, str]:
    """(url, key) of a kept SQLite database, built on first use and migrated on every use."""
    folder.mkdir(parents=True, exist_ok=True)
    path, key_file = folder / f"{shape}-{n}.db", folder / f"{shape}-{n}.key"
    url = f"sqlite:///{path}"
    if not key_file.exists():
        path.unlink(missing_ok=True)
        await asyncio.to_thread(upgrade, url)
        key_file.write_text(await _build_timed(url, shape, n, small))
    await asyncio.to_thread(upgrade, url)
    return url, key_file.read_text().strip()


#: Kept PostgreSQL databases are named after this (and the shape and size), so they are easy to
#: tell apart from other users' databases on a shared server, and ``--drop`` removes them.
PG_PREFIX = "chatmem_benchsearch"


def _pg_admin() -> dict:
    pg = server_url()
    if not pg:
        raise SystemExit("--postgres needs CHATMEM_TEST_POSTGRES_URL")
    u = make_url(pg)
    return dict(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database="postgres",
    )


async def _kept_pg(folder: Path, shape: str, n: int, small: int) -> tuple[str, str]:
    """(url, key) of a kept PostgreSQL database ``PG_PREFIX_<shape>_<n>`` (its key in DIR),
    built on first use and migrated on every use; ``--drop`` removes them."""
    folder.mkdir(parents=True, exist_ok=True)
    name, key_file = f"{PG_PREFIX}_{shape}_{n}", folder / f"pg-{shape}-{n}.key"
    url = make_url(server_url()).set(database=name).render_as_string(hide_password=False)
    admin = await asyncpg.connect(**_pg_admin())
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if not (exists and key_file.exists()):
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{name}"')
            key_file.unlink(missing_ok=True)
    finally:
        await admin.close()
    await asyncio.to_thread(upgrade, url)
    if not key_file.exists():
        key_file.write_text(await _build_timed(url, shape, n, small))
    return url, key_file.read_text().strip()


async def _drop_kept_pg(folder: Path | None) -> None:
    admin = await asyncpg.connect(**_pg_admin())
    try:
        names = await admin.fetch(
            "SELECT datname FROM pg_database WHERE datname LIKE $1", PG_PREFIX + "\\_%"
        )
        for row in names:
            await admin.execute(f'DROP DATABASE IF EXISTS "{row["datname"]}" WITH (FORCE)')
            print("dropped", row["datname"])
    finally:
        await admin.close()
    for key in folder.glob("pg-*.key") if folder else ():
        key.unlink()


@asynccontextmanager
async def _sqlite():
    with tempfile.TemporaryDirectory(prefix="chatmem-search-") as d:
        url = f"sqlite:///{d}/bench.db"
        upgrade(url)
        yield url


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--large", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--shapes", default="own,crowd", help="which shapes, comma-separated")
    ap.add_argument(
        "--keep",
        metavar="DIR",
        help="keep and reuse the databases: SQLite files in DIR; PostgreSQL databases "
        f"{PG_PREFIX}_<shape>_<size> on the server, their keys in DIR (--drop removes them)",
    )
    ap.add_argument(
        "--baseline",
        metavar="SRC",
        help="also serve every database with the code in SRC (another checkout's src/, e.g. "
        "`git archive main src`), interleaved: before/after on the same corpus",
    )
    ap.add_argument(
        "--drop",
        action="store_true",
        help=f"drop the kept PostgreSQL databases ({PG_PREFIX}_*) and their keys in --keep DIR",
    )
    args = ap.parse_args()
    if args.drop:
        asyncio.run(_drop_kept_pg(Path(args.keep) if args.keep else None))
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()

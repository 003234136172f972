"""Benchmark: a log-mode append over HTTP vs the same write done raw with the same driver.

Issue 18's target: a log-mode append (``POST …/messages`` with ``generate: false``, what an
application that calls its model itself sends for every message) costs ≤ 10× a raw INSERT +
counter UPDATE on SQLite and ≤ 4× on PostgreSQL. The raw side is the floor of the work: one
transaction that inserts a message row into a scratch table and bumps a counter row, with the
``aiosqlite`` or ``asyncpg`` (the drivers SQLAlchemy drives for chatmem), on the same
database file/server. The HTTP side is a real ``chatmem serve`` (no job worker) with an API key.
Both sides alternate in batches inside one loop, so machine noise hits them alike; medians.

A third side in the same loop is the floor of the HTTP side: ``GET /api/health`` on the same
server and client (one request through the same middleware, one ``SELECT 1``, no auth, no
write). Its ratio to the raw write is what any request costs before the append does anything;
the append's ratio cannot go below it. Beside it, ``GET /api/models`` (lean client): a request
with the append's authentication (a cached key) and a JSON answer and no database at all —
health's ``SELECT 1`` takes a trip to aiosqlite's thread that the append (whose statements run
on the loop's thread, db/sqlite_driver.py) does not, so on SQLite this is the closer floor: the
append's cost above it is its own work.

Two HTTP clients, both in the same loop: ``httpx`` (what the figures always used; its own CPU is
~half of a small request's wall time here, and it is on the measured path because the client runs
in this process) and a lean keep-alive HTTP/1.1 client on asyncio streams (``LeanClient``: one
connection, the request written as bytes, the response read by ``Content-Length``), which is
close to what the request costs the server plus the loopback. Decision (issue 18): the client's
CPU is not chatmem's cost, so the ratio that measures chatmem against the ≤ 10× / ≤ 4× targets is
the lean client's; the httpx ratio is printed beside it, as before, and neither side's raw write
changed.

A fourth side says what the schema itself costs: the same message written raw, with the same
driver, into chatmem's own ``messages`` table (its indexes and full-text triggers — SQLite's FTS5
triggers call ``chatmem_cjk_terms``, registered here as chatmem registers it) and the
conversation's counters updated. The lean append ÷ this is chatmem's overhead over its own data
model; the issue's ratio stays the one against the scratch table.

``--baseline SRC`` (the ``src`` folder of another checkout) serves the same database with that
code too, driven by the lean client in the same loop: the old code's ratio of the same run.

    .venv/bin/python bench/append.py [--n 300] [--batch 20] [--baseline SRC]

PostgreSQL comes from CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL (a throw-away
database); without it only SQLite runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiosqlite
import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from tests.servers import Server, create_user  # noqa: E402

from chatmem.db.fulltext import cjk_terms  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402
from lean import LeanClient  # noqa: E402
from pgtemp import temp_database  # noqa: E402

SCRATCH = (
    "CREATE TABLE bench_raw_messages (id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, "
    "role TEXT NOT NULL, content TEXT NOT NULL, created_at BIGINT NOT NULL)",
    "CREATE TABLE bench_raw_counts (id TEXT PRIMARY KEY, n BIGINT NOT NULL)",
    "INSERT INTO bench_raw_counts VALUES ('c', 0)",
)


# The same write into chatmem's own tables (``messages`` with its indexes and full-text triggers,
# the conversation's counters): what the schema itself costs a message, whoever writes it.
SCHEMA_INSERT = (
    "INSERT INTO messages (id, conversation_id, parent_id, role, blocks, search_text, user_id, "
    "created_at, depth) VALUES ($1, $2, $3, 'user', $4::jsonb, $5, $6, $7, $8)"
)
SCHEMA_TOUCH = (
    "UPDATE conversations SET message_count = message_count + 1, active_leaf_id = $1, "
    "updated_at = $2 WHERE id = $3"
)


def _qmark(sql: str) -> str:
    """PostgreSQL's ``$n`` placeholders (and casts) as SQLite's ``?``."""
    return re.sub(r"\$\d+(::\w+)?", "?", sql)


class SchemaRow:
    """The next message of a chain written raw into chatmem's schema (each under the last)."""

    def __init__(self, conversation_id: str, user_id: str) -> None:
        self.cid, self.uid = conversation_id, user_id
        self.parent: str | None = None
        self.depth = 0
        self.last = ""

    def args(self) -> tuple:
        self.last, parent = uuid.uuid4().hex, self.parent
        self.parent, self.depth = self.last, self.depth + 1
        blocks = json.dumps([{"type": "text", "text": "a logged message"}])
        now = time.time_ns() // 1_000_000
        return (self.last, self.cid, parent, blocks, "a logged message", self.uid, now, self.depth)

    def touch_args(self) -> tuple:
        return (self.last, time.time_ns() // 1_000_000, self.cid)


class RawSqlite:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.db = conn

    @classmethod
    async def open(cls, path: str) -> RawSqlite:
        conn = await aiosqlite.connect(path, isolation_level=None)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.create_function("chatmem_cjk_terms", 1, cjk_terms, deterministic=True)
        for s in SCRATCH:
            await conn.execute(s)
        return cls(conn)

    async def append(self, text: str) -> None:
        await self.db.execute("BEGIN IMMEDIATE")
        await self.db.execute(
            "INSERT INTO bench_raw_messages VALUES (?, 'c', 'user', ?, ?)",
            (uuid.uuid4().hex, text, time.time_ns() // 1_000_000),
        )
        await self.db.execute("UPDATE bench_raw_counts SET n = n + 1 WHERE id = 'c'")
        await self.db.execute("COMMIT")

    async def owner(self, cid: str) -> str:
        async with self.db.execute("SELECT user_id FROM conversations WHERE id = ?", (cid,)) as cur:
            row = await cur.fetchone()
        assert row is not None
        return row[0]

    async def append_schema(self, row: SchemaRow) -> None:
        await self.db.execute("BEGIN IMMEDIATE")
        await self.db.execute(_qmark(SCHEMA_INSERT), row.args())
        await self.db.execute(_qmark(SCHEMA_TOUCH), row.touch_args())
        await self.db.execute("COMMIT")

    async def close(self) -> None:
        await self.db.close()


class RawPostgres:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @classmethod
    async def open(cls, url: str) -> RawPostgres:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        for s in SCRATCH:
            await conn.execute(s)
        return cls(conn)

    async def append(self, text: str) -> None:
        async with self.conn.transaction():
            await self.conn.execute(
                "INSERT INTO bench_raw_messages VALUES ($1, 'c', 'user', $2, $3)",
                uuid.uuid4().hex,
                text,
                time.time_ns() // 1_000_000,
            )
            await self.conn.execute("UPDATE bench_raw_counts SET n = n + 1 WHERE id = 'c'")

    async def owner(self, cid: str) -> str:
        return await self.conn.fetchval("SELECT user_id FROM conversations WHERE id = $1", cid)

    async def append_schema(self, row: SchemaRow) -> None:
        async with self.conn.transaction():
            await self.conn.execute(SCHEMA_INSERT, *row.args())
            await self.conn.execute(SCHEMA_TOUCH, *row.touch_args())

    async def close(self) -> None:
        await self.conn.close()


async def _timed(into: list[float], call) -> None:
    t0 = time.perf_counter()
    status = await call()
    into.append((time.perf_counter() - t0) * 1000)
    assert status < 400, status


async def compare(label: str, db_url: str, raw, n: int, batch: int, baseline: str | None) -> None:
    key = create_user(db_url, f"append-{uuid.uuid4().hex[:6]}@example.com")
    server = Server(db_url, args=("--no-worker",)).start()
    old = (
        Server(db_url, {"PYTHONPATH": str(Path(baseline).resolve())}).start() if baseline else None
    )
    ms: dict[str, list[float]] = {
        k: [] for k in ("http", "lean", "raw", "schema", "floor", "lean_floor", "lean_nodb")
    }
    auth = {"Authorization": f"Bearer {key}"}
    lean = LeanClient("127.0.0.1", server.port, auth)
    old_lean = LeanClient("127.0.0.1", old.port, auth) if old else None
    try:
        async with httpx.AsyncClient(base_url=server.base, timeout=60, headers=auth) as c:
            cid = (await c.post("/api/conversations", json={})).json()["id"]
            path = f"/api/conversations/{cid}/messages"
            body = {"role": "user", "content": "a logged message", "generate": False}

            async def via_httpx(method: str, url: str, json_body=None) -> int:
                return (await c.request(method, url, json=json_body)).status_code

            async def via_lean(method: str, url: str, json_body=None) -> int:
                return (await lean.request(method, url, json_body))[0]

            async def raw_write() -> int:
                await raw.append("a logged message")
                return 200

            schema_row = SchemaRow(cid, await raw.owner(cid))

            async def raw_schema() -> int:
                await raw.append_schema(schema_row)
                return 200

            sides = {
                "http": lambda: via_httpx("POST", path, body),
                "lean": lambda: via_lean("POST", path, body),
                "raw": raw_write,
                "schema": raw_schema,
                "floor": lambda: via_httpx("GET", "/api/health"),
                "lean_floor": lambda: via_lean("GET", "/api/health"),
                "lean_nodb": lambda: via_lean("GET", "/api/models"),
            }
            if old_lean is not None:
                _, made = await old_lean.request("POST", "/api/conversations", {})
                old_path = f"/api/conversations/{json.loads(made)['id']}/messages"
                sides["base"] = lambda: _status(old_lean.request("POST", old_path, body))
                sides["base_floor"] = lambda: _status(old_lean.request("GET", "/api/health"))
                ms["base"], ms["base_floor"] = [], []
            for _ in range(5):  # warm every side
                for call in sides.values():
                    await call()
            for _ in range(0, n, batch):
                for name, call in sides.items():
                    for _ in range(batch):
                        await _timed(ms[name], call)
    finally:
        await lean.close()
        server.stop()
        if old is not None and old_lean is not None:
            await old_lean.close()
            old.stop()
        await raw.close()
    _report(label, {k: statistics.median(v) for k, v in ms.items()}, len(ms["raw"]))


async def _status(request) -> int:
    return (await request)[0]


def _report(label: str, p50: dict[str, float], n: int) -> None:
    w = p50["raw"]
    target = 10 if label == "SQLite" else 4
    pad = " " * len(label)
    print(
        f"{label}: log-mode append over HTTP vs raw INSERT + counter UPDATE p50 {w:.3f} ms "
        f"(target ≤ {target}; {n} each)\n"
        f"{pad}  lean client: p50 {p50['lean']:.2f} ms → ratio {p50['lean'] / w:.1f}"
        f"   | httpx: p50 {p50['http']:.2f} ms → ratio {p50['http'] / w:.1f}\n"
        f"{pad}  floor, GET /api/health: lean p50 {p50['lean_floor']:.2f} ms → ratio "
        f"{p50['lean_floor'] / w:.1f}   | httpx p50 {p50['floor']:.2f} ms → ratio "
        f"{p50['floor'] / w:.1f}\n"
        f"{pad}  floor without a database, GET /api/models: lean p50 {p50['lean_nodb']:.2f} ms "
        f"→ ratio {p50['lean_nodb'] / w:.1f}; the lean append is "
        f"{p50['lean'] - p50['lean_nodb']:.2f} ms above it"
        f"\n{pad}  the same write raw into chatmem's own tables (indexes, full-text triggers): p50 "
        f"{p50['schema']:.2f} ms → ratio {p50['schema'] / w:.1f}; the lean append is "
        f"{p50['lean'] / p50['schema']:.1f}× it"
    )
    if "base" in p50:
        print(
            f"{pad}  baseline code, lean client: append p50 {p50['base']:.2f} ms → ratio "
            f"{p50['base'] / w:.1f}; health p50 {p50['base_floor']:.2f} ms → ratio "
            f"{p50['base_floor'] / w:.1f}"
        )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="appends per side")
    ap.add_argument("--batch", type=int, default=20, help="appends per side before switching")
    ap.add_argument("--baseline", metavar="SRC", help="also serve the data with this src folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="chatmem-append-") as d:
        url = f"sqlite:///{d}/bench.db"
        upgrade(url)
        await compare(
            "SQLite", url, await RawSqlite.open(f"{d}/bench.db"), args.n, args.batch, args.baseline
        )
    async with temp_database("chatmem_append") as pg:
        if pg is None:
            print("PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL)")
            return
        await compare(
            "PostgreSQL", pg, await RawPostgres.open(pg), args.n, args.batch, args.baseline
        )


if __name__ == "__main__":
    asyncio.run(main())

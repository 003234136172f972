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
the append's ratio cannot go below it.

    .venv/bin/python bench/append.py [--n 300] [--batch 20]

PostgreSQL comes from CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL (a throw-away
database); without it only SQLite runs.
"""

from __future__ import annotations

import argparse
import asyncio
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

from chatmem.db.migrate import upgrade  # noqa: E402
from pgtemp import temp_database  # noqa: E402

SCRATCH = (
    "CREATE TABLE bench_raw_messages (id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, "
    "role TEXT NOT NULL, content TEXT NOT NULL, created_at BIGINT NOT NULL)",
    "CREATE TABLE bench_raw_counts (id TEXT PRIMARY KEY, n BIGINT NOT NULL)",
    "INSERT INTO bench_raw_counts VALUES ('c', 0)",
)


class RawSqlite:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.db = conn

    @classmethod
    async def open(cls, path: str) -> RawSqlite:
        conn = await aiosqlite.connect(path, isolation_level=None)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
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

    async def close(self) -> None:
        await self.conn.close()


async def compare(label: str, db_url: str, raw, n: int, batch: int) -> None:
    key = create_user(db_url, f"append-{uuid.uuid4().hex[:6]}@example.com")
    server = Server(db_url, args=("--no-worker",)).start()
    http_ms: list[float] = []
    raw_ms: list[float] = []
    floor_ms: list[float] = []
    try:
        async with httpx.AsyncClient(
            base_url=server.base, timeout=60, headers={"Authorization": f"Bearer {key}"}
        ) as c:
            cid = (await c.post("/api/conversations", json={})).json()["id"]
            body = {"role": "user", "content": "a logged message", "generate": False}
            for _ in range(5):  # warm both sides
                (await c.post(f"/api/conversations/{cid}/messages", json=body)).raise_for_status()
                await raw.append("warm")
            done = 0
            while done < n:
                for _ in range(batch):
                    t0 = time.perf_counter()
                    r = await c.post(f"/api/conversations/{cid}/messages", json=body)
                    http_ms.append((time.perf_counter() - t0) * 1000)
                    r.raise_for_status()
                for _ in range(batch):
                    t0 = time.perf_counter()
                    await raw.append("a logged message")
                    raw_ms.append((time.perf_counter() - t0) * 1000)
                for _ in range(batch):
                    t0 = time.perf_counter()
                    r = await c.get("/api/health")
                    floor_ms.append((time.perf_counter() - t0) * 1000)
                    r.raise_for_status()
                done += batch
    finally:
        server.stop()
        await raw.close()
    h, w = statistics.median(http_ms), statistics.median(raw_ms)
    f = statistics.median(floor_ms)
    target = 10 if label == "SQLite" else 4
    print(
        f"{label}: log-mode append over HTTP p50 {h:.2f} ms vs raw INSERT + counter UPDATE "
        f"p50 {w:.3f} ms → ratio {h / w:.1f} (target ≤ {target}; {len(http_ms)} each)\n"
        f"{' ' * len(label)}  floor: GET /api/health p50 {f:.2f} ms → ratio {f / w:.1f}"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="appends per side")
    ap.add_argument("--batch", type=int, default=20, help="appends per side before switching")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="chatmem-append-") as d:
        url = f"sqlite:///{d}/bench.db"
        upgrade(url)
        await compare("SQLite", url, await RawSqlite.open(f"{d}/bench.db"), args.n, args.batch)
    async with temp_database("chatmem_append") as pg:
        if pg is None:
            print("PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL)")
            return
        await compare("PostgreSQL", pg, await RawPostgres.open(pg), args.n, args.batch)


if __name__ == "__main__":
    asyncio.run(main())

"""Benchmark: what does a vector search cost at 1,000 vs 100,000 stored vectors?

One user holds a conversation with 1,000 message vectors and one with 100,000 (384 dimensions,
all-MiniLM-L6-v2's size; random unit vectors), beside other users' vectors in the same table.
For each, the median latency of ``vector_search`` (top 20, the same read + score path a turn uses):

- the 1,000-vector conversation — the baseline;
- the 100,000-vector conversation with the default candidate bound
  (``embedding_max_candidates`` = 10,000: the newest 10,000 are scored) — ratio printed;
- the same without the bound (all 100,000 scored) — shows what the bound saves;
- the whole user (both conversations, bounded).

PostgreSQL runs when CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL names a server (the
bench creates and drops its own database there). Needs NumPy (``pip install 'chatmem[local]'``).

    .venv/bin/python bench/embeddings.py [--reads 21] [--large 100000] [--dims 384]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from sqlalchemy import insert

from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.db.migrate import upgrade
from chatmem.embeddings import vector_search
from pgtemp import temp_database

MODEL = "local:all-MiniLM-L6-v2"
CHUNK = 2000


def unit_rows(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    m = rng.standard_normal((n, dims), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m.astype("<f4")


async def fill(db: Database, user_id: str, n: int, dims: int, rng) -> str:
    """A conversation with ``n`` messages and one vector each; returns its id."""
    now = now_ms()
    cid = new_id("conv")
    async with db.write() as c:
        await c.execute(
            insert(t.conversations).values(
                id=cid, user_id=user_id, title="bench", created_at=now, updated_at=now
            )
        )
    vecs = unit_rows(rng, n, dims)
    for start in range(0, n, CHUNK):
        msgs, embs = [], []
        for i in range(start, min(n, start + CHUNK)):
            mid = new_id("msg")
            msgs.append(
                dict(
                    id=mid,
                    conversation_id=cid,
                    role="user" if i % 2 == 0 else "assistant",
                    blocks=[{"type": "text", "text": f"message {i}"}],
                    search_text=f"message {i}",
                    status="complete",
                    created_at=now - (n - i),
                    user_id=user_id,
                )
            )
            embs.append(
                dict(
                    id=new_id("emb"),
                    user_id=user_id,
                    owner_kind="message",
                    message_id=mid,
                    conversation_id=cid,
                    model=MODEL,
                    dimensions=dims,
                    text_hash="bench",
                    vector=vecs[i].tobytes(),
                    created_at=now,
                )
            )
        async with db.write() as c:
            await c.execute(insert(t.messages), msgs)
            await c.execute(insert(t.embeddings), embs)
    return cid


async def timed(db: Database, user_id: str, conv_ids, dims: int, reads: int, bound: int) -> float:
    rng = np.random.default_rng(99)
    samples = []
    for i in range(reads + 2):
        q = unit_rows(rng, 1, dims)[0].tolist()
        t0 = time.perf_counter()
        async with db.read() as c:
            hits = await vector_search(
                c,
                user_id=user_id,
                query_vector=q,
                model=MODEL,
                conversation_ids=conv_ids,
                limit=20,
                max_candidates=bound,
            )
        dt = time.perf_counter() - t0
        assert len(hits) == 20
        if i >= 2:  # warm-up
            samples.append(dt)
    return statistics.median(samples)


async def bench_db(url: str, label: str, args) -> None:
    db = Database(url)
    rng = np.random.default_rng(7)
    try:
        t0 = time.perf_counter()
        for _ in range(2):  # neighbours share the table and its index
            other, _ = await auth_service.create_user(db, f"n-{uuid.uuid4().hex[:8]}@example.com")
            await fill(db, other["id"], 5000, args.dims, rng)
        user, _ = await auth_service.create_user(db, f"b-{uuid.uuid4().hex[:8]}@example.com")
        small = await fill(db, user["id"], 1000, args.dims, rng)
        large = await fill(db, user["id"], args.large, args.dims, rng)
        if db.dialect == "postgresql":
            async with db.engine.connect() as c:
                ac = await c.execution_options(isolation_level="AUTOCOMMIT")
                await ac.exec_driver_sql("VACUUM ANALYZE embeddings")
        print(
            f"[{label}] loaded {args.large + 11_000:,} vectors in {time.perf_counter() - t0:.0f} s"
        )
        uid, bound = user["id"], 10_000
        t_small = await timed(db, uid, [small], args.dims, args.reads, bound)
        t_large = await timed(db, uid, [large], args.dims, args.reads, bound)
        t_all = await timed(db, uid, [large], args.dims, args.reads, args.large)
        t_user = await timed(db, uid, None, args.dims, args.reads, bound)
        ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
        print(
            f"[{label}] vector_search top 20, {args.dims} dims (median of {args.reads}):\n"
            f"  1,000 vectors               {ms(t_small)}\n"
            f"  {args.large:,} vectors, bounded {ms(t_large)}  ratio {t_large / t_small:.1f}× "
            f"(the newest {bound:,} scored)\n"
            f"  {args.large:,} vectors, all     {ms(t_all)}  ratio {t_all / t_small:.1f}×\n"
            f"  whole user, bounded         {ms(t_user)}  ratio {t_user / t_small:.1f}×"
        )
    finally:
        await db.dispose()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=21)
    ap.add_argument("--large", type=int, default=100_000)
    ap.add_argument("--dims", type=int, default=384)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{d}/bench.db"
        upgrade(url)
        await bench_db(url, "sqlite", args)
    async with temp_database("chatmem_bench_emb") as url:
        if url:
            await bench_db(url, "postgresql", args)


if __name__ == "__main__":
    asyncio.run(main())

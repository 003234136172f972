"""Benchmark: does choosing a turn's memories stay flat-cost as a user's memories grow, and how fast
is the offline rule-based extractor?

(a) For one user with 100 and with 10,000 memories (mixed types, importances, statuses and some
    agent-scoped rows; other users' rows beside them), time the context hook's selection —
    bounded SQL fetch, FTS5 / tsvector relevance to the query, ranking, packing into 800 tokens —
    and print median(10,000) ÷ median(100). Target ≤ 3.
(b) Rule-based extraction throughput over a mixed English/Chinese message corpus (messages/s).

PostgreSQL runs when CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL names a server (the
bench creates and drops its own database there).

    .venv/bin/python bench/memory.py [--reads 41]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sqlalchemy import insert

from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.db.migrate import upgrade
from chatmem.memory import retrieval
from chatmem.memory.extract import SourceMessage, rule_candidates
from pgtemp import temp_database

WORDS = (
    "coffee tea jazz hiking Berlin Paris python rust chess cat dog garden piano novel "
    "marathon sushi cycling photography football museum sunrise vegan allergy"
).split()
TYPES = ("location", "preference", "identity", "schedule", "habit", "goal", "constraint")
STATUSES = ("ACTIVE",) * 6 + ("QUERY_DEPENDENT", "STALE", "DISABLED", "DELETED")
QUERIES = (
    "What should I cook tonight with sushi?",
    "Any tips for my marathon training?",
    "Recommend a novel about Berlin",
    "How do I care for my cat?",
)

CORPUS = [
    "My name is Alice and I live in Paris.",
    "I moved to Berlin last month.",
    "Can you help me write an email to my landlord?",
    "I'm allergic to peanuts.",
    "Please don't use emojis.",
    "I usually work out in the morning.",
    "What's the capital of Peru?",
    "My favourite colour is green.",
    "I work as a nurse in the night shift.",
    "我叫小明，今年28岁。",
    "我住在上海。",
    "以后回复我尽量直接一点。",
    "今天天气怎么样？",
    "我对花生过敏。",
    "I'm in Tokyo this week for a conference.",
    "Thanks, that was helpful!",
    "我正在学习日语，我的目标是考上研究生。",
    "Tell me a joke about databases.",
]


def rows_for(user_id: str, n: int, agent_id: str | None, rnd: random.Random) -> list[dict]:
    now = now_ms()
    out = []
    for i in range(n):
        w = rnd.sample(WORDS, 3)
        out.append(
            dict(
                id=new_id("mem"),
                user_id=user_id,
                memory_text=f"Memory {i}: likes {w[0]}, {w[1]} and {w[2]}",
                memory_type=rnd.choice(TYPES),
                slot=f"slot_{i}" if i % 3 else "",
                value=w[0],
                status=rnd.choice(STATUSES),
                importance=rnd.randint(1, 5),
                confidence=round(rnd.uniform(0.4, 1.0), 2),
                agent_id=agent_id if i % 10 == 0 else None,
                created_at=now - rnd.randint(0, 10**10),
                updated_at=now - rnd.randint(0, 10**10),
            )
        )
    return out


async def setup(db: Database, n: int, rnd: random.Random) -> str:
    user, _ = await auth_service.create_user(db, f"bench-{uuid.uuid4().hex[:8]}@example.com")
    now = now_ms()
    agent_id = new_id("agt")
    async with db.write() as c:
        await c.execute(
            insert(t.agents).values(
                id=agent_id,
                user_id=user["id"],
                name="A",
                handle="a",
                created_at=now,
                updated_at=now,
            )
        )
        rows = rows_for(user["id"], n, agent_id, rnd)
        for i in range(0, len(rows), 1000):
            await c.execute(insert(t.memories), rows[i : i + 1000])
    return user["id"]


def count_tokens(s: str) -> int:
    return max(1, (len(s) + 3) // 4)


async def _select_once(db: Database, user_id: str, q: str) -> float:
    t0 = time.perf_counter()
    async with db.read() as c:
        got = await retrieval.select_for_context(
            c,
            user_id=user_id,
            agent_id=None,
            query=q,
            budget_tokens=800,
            count_tokens=count_tokens,
            now=now_ms(),
            max_lines=50,
        )
    assert got["lines"], "nothing selected"
    return time.perf_counter() - t0


async def time_selection(db: Database, users: list[str], reads: int) -> list[float]:
    """Median selection time per user, the users interleaved one-for-one in the same loop (so
    machine-load drift lands on both sides of the ratio, not on one)."""
    samples: list[list[float]] = [[] for _ in users]
    for i in range(reads + 3):
        q = QUERIES[i % len(QUERIES)]
        for k, user_id in enumerate(users):
            dt = await _select_once(db, user_id, q)
            if i >= 3:  # warm-up
                samples[k].append(dt)
    return [statistics.median(s) for s in samples]


async def bench_db(url: str, label: str, reads: int) -> None:
    db = Database(url)
    rnd = random.Random(7)
    try:
        # neighbours: other users' memories share the tables and the full-text index
        for _ in range(3):
            await setup(db, 2000, rnd)
        small = await setup(db, 100, rnd)
        large = await setup(db, 10_000, rnd)
        if db.dialect == "postgresql":  # steady state: statistics and a flushed GIN pending list
            async with db.engine.connect() as c:
                ac = await c.execution_options(isolation_level="AUTOCOMMIT")
                await ac.exec_driver_sql("VACUUM ANALYZE memories")
        t_small, t_large = await time_selection(db, [small, large], reads)
        print(
            f"[{label}] select memories for a turn: 100 → {t_small * 1000:.2f} ms, "
            f"10,000 → {t_large * 1000:.2f} ms (median of {reads}, interleaved); "
            f"ratio {t_large / t_small:.2f} (target ≤ 3)"
        )
    finally:
        await db.dispose()


def bench_extraction(rounds: int = 300) -> None:
    msgs = [SourceMessage(f"m{i}", "user", text, 1000 + i) for i, text in enumerate(CORPUS)]
    n, found = 0, 0
    t0 = time.perf_counter()
    for _ in range(rounds):
        for m in msgs:
            found += len(rule_candidates(m, now=2000))
            n += 1
    dt = time.perf_counter() - t0
    print(
        f"[rules] extraction: {n} messages in {dt:.2f} s → {n / dt:,.0f} messages/s "
        f"({found / n:.2f} candidates per message)"
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=41)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{d}/bench.db"
        upgrade(url)
        await bench_db(url, "sqlite", args.reads)
    async with temp_database("chatmem_bench_mem") as url:
        if url:
            await bench_db(url, "postgresql", args.reads)
    bench_extraction()


if __name__ == "__main__":
    asyncio.run(main())

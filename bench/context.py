"""Benchmark: context assembly cost must not grow with conversation length (issue 4, target ≤ 2×).

Builds, on SQLite and (when ``CHATMEM_BENCH_POSTGRES_URL`` or ``CHATMEM_TEST_POSTGRES_URL`` is set)
on PostgreSQL:
one user with 500 memories and two conversations, of 100 and of 10,000 messages, both in their
steady state (compacted, as the after-turn job keeps them); it times ``build_turn_context`` — the
exact call a turn makes, memory retrieval included — and prints the ratio 10,000 / 100. For
information it also prints the ratio without the memory source, with no compaction at all (the walk
then stops at the window), and against a 100-message conversation of a user with no memories.

Run: ``.venv/bin/python bench/context.py [--iterations N]``. Prints ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid

from sqlalchemy import insert

from chatmem.app import create_runtime
from chatmem.auth import service as auth_service
from chatmem.auth.models import Principal
from chatmem.config import Settings
from chatmem.context import compaction as cp
from chatmem.context import service as ctx
from chatmem.context.tokens import counter_for
from chatmem.conversations import store
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.db.migrate import upgrade
from chatmem.providers.base import ModelInfo
from chatmem.runtime import Runtime

MODEL = ModelInfo(id="demo", provider="demo", context_window=8192, max_output=1024)
WORDS = (
    "plan",
    "trip",
    "Lisbon",
    "budget",
    "museum",
    "coffee",
    "train",
    "hotel",
    "friday",
    "dinner",
    "python",
    "deadline",
    "garden",
    "music",
    "running",
    "book",
)


def sentence(i: int, n: int = 18) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n)) + f" #{i}."


async def bulk_conversation(db: Database, user_id: str, n_messages: int) -> str:
    """A single-path conversation written in batches (as a long-lived chat would have it)."""
    async with db.write() as c:
        cid = await store.insert_conversation(c, user_id, title=f"bench {n_messages}")
    parent = None
    base = now_ms() - n_messages * 1000
    rows = []
    for i in range(n_messages):
        mid = new_id("msg")
        role = "user" if i % 2 == 0 else "assistant"
        blocks = [{"kind": "text", "text": sentence(i)}]
        rows.append(
            dict(
                id=mid,
                conversation_id=cid,
                parent_id=parent,
                role=role,
                blocks=blocks,
                search_text=blocks[0]["text"],
                status="complete",
                created_at=base + i * 1000,
                user_id=user_id,
                depth=i,
            )
        )
        parent = mid
    for k in range(0, len(rows), 1000):
        async with db.write() as c:
            await c.execute(insert(t.messages), rows[k : k + 1000])
    async with db.write() as c:
        await store.set_leaf(c, cid, parent)
        await c.execute(
            t.conversations.update()
            .where(t.conversations.c.id == cid)
            .values(message_count=n_messages)
        )
    return cid


async def add_memories(db: Database, user_id: str, n: int) -> None:
    now = now_ms()
    types = ("preference", "identity", "location", "habit", "goal", "constraint")
    rows = [
        dict(
            id=new_id("mem"),
            user_id=user_id,
            memory_text=f"The user {sentence(i, 8)}",
            memory_type=types[i % len(types)],
            slot=f"slot_{i}",
            value=str(i),
            importance=1 + i % 5,
            created_at=now - i,
            updated_at=now - i,
        )
        for i in range(n)
    ]
    async with db.write() as c:
        await c.execute(insert(t.memories), rows)


async def principal(db: Database) -> Principal:
    user, _ = await auth_service.create_user(db, f"bench-{uuid.uuid4().hex[:8]}@example.com")
    return Principal(id=user["id"], email=user["email"])


async def steady_state(rt: Runtime, user: Principal, cid: str) -> None:
    summ = cp.ExtractiveSummarizer(counter_for(MODEL.encoding))
    for _ in range(10):
        res = await cp.compact(
            rt.db,
            conversation_id=cid,
            user_id=user.id,
            settings=rt.settings,
            model=MODEL,
            summarizer=summ,
        )
        if not res.compacted:
            return


async def _turn_once(rt: Runtime, user: Principal, conv) -> tuple[float, dict]:
    t0 = time.perf_counter()
    async with rt.db.read() as c:
        tc = await ctx.build_turn_context(
            c,
            settings=rt.settings,
            conv=conv,
            parent_id=conv.active_leaf_id,
            model=MODEL,
            principal=user,
            rt=rt,
        )
    return time.perf_counter() - t0, tc.report


async def time_turns(rt: Runtime, cases: list, iterations: int) -> list[tuple[float, dict]]:
    """(median seconds, last report) per ``(user, conversation id)`` case, the cases interleaved
    one-for-one in the same loop: load drift lands on both sides of every ratio."""
    convs = []
    for user, cid in cases:
        async with rt.db.read() as c:
            convs.append(await store.get_conversation(c, user.id, cid))
    samples: list[list[float]] = [[] for _ in cases]
    reports: list[dict] = [{} for _ in cases]
    for i in range(iterations + 3):
        for k, ((user, _), conv) in enumerate(zip(cases, convs, strict=True)):
            dt, reports[k] = await _turn_once(rt, user, conv)
            if i >= 3:  # warm-up: encodings, statement caches
                samples[k].append(dt)
    return [(statistics.median(s), r) for s, r in zip(samples, reports, strict=True)]


def memory_hook(rt: Runtime) -> str:
    return "memory.hooks.make_memory_source" if rt.memory_source is not None else "none"


async def run(url: str, label: str, iterations: int) -> None:
    upgrade(url)
    settings = Settings(database_url=url)
    rt = create_runtime(settings, db=Database(url))
    try:
        hook = memory_hook(rt)
        user, bare = await principal(rt.db), await principal(rt.db)
        await add_memories(rt.db, user.id, 500)
        small = await bulk_conversation(rt.db, user.id, 100)
        big = await bulk_conversation(rt.db, user.id, 10_000)
        big_raw = await bulk_conversation(rt.db, user.id, 10_000)
        small_raw = await bulk_conversation(rt.db, user.id, 100)
        small_bare = await bulk_conversation(rt.db, bare.id, 100)
        for u, cid in ((user, small), (user, big), (bare, small_bare)):
            await steady_state(rt, u, cid)

        cases = [(user, small), (user, big), (user, small_raw), (user, big_raw), (bare, small_bare)]
        timed = await time_turns(rt, cases, iterations)
        (t_small, r_small), (t_big, r_big), (t_small_raw, _), (t_big_raw, r_big_raw) = timed[:4]
        t_bare = timed[4][0]
        source, rt.memory_source = rt.memory_source, None
        (t_small_nm, _), (t_big_nm, _) = await time_turns(rt, cases[:2], iterations)
        rt.memory_source = source

        def line(name, secs, rep):
            return (
                f"[{label}] {name:<34}{secs * 1000:8.2f} ms  ({rep['total_tokens']} tokens, "
                f"{len(rep['message_ids'])} msgs, {len(rep['memory_ids'])} memories, "
                f"{len(rep['summary_block_ids'])} summary blocks)"
            )

        print(f"[{label}] memory source: {hook}; one user with 500 memories")
        print(line("100 messages:", t_small, r_small))
        print(line("10,000 messages:", t_big, r_big))
        print(
            f"[{label}] RATIO 10,000 / 100 messages, 500 memories (target <= 2.0): "
            f"{t_big / t_small:.2f}"
        )
        print(f"[{label}]   without the memory source:            {t_big_nm / t_small_nm:.2f}")
        print(
            f"[{label}]   with no compaction (window-bounded walk): {t_big_raw / t_small_raw:.2f}"
            f"  ({len(r_big_raw['message_ids'])} of 10,000 msgs fit)"
        )
        print(
            f"[{label}]   10,000 msgs + 500 memories / 100 msgs + no memories: "
            f"{t_big / t_bare:.2f}  (memory retrieval is a fixed, bounded cost)"
        )
    finally:
        await rt.db.dispose()


async def pg_database(admin_url: str) -> tuple[str, str]:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(admin_url)
    name = f"chatmem_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    conn = await asyncpg.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database="postgres",
    )
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return u.set(database=name).render_as_string(hide_password=False), name


async def pg_drop(admin_url: str, name: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(admin_url)
    conn = await asyncpg.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database="postgres",
    )
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        asyncio.run(run(f"sqlite:///{d}/bench.db", "sqlite", args.iterations))
    admin = os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get(
        "CHATMEM_TEST_POSTGRES_URL"
    )
    if not admin:
        print("[postgres] skipped: set CHATMEM_BENCH_POSTGRES_URL", file=sys.stderr)
        return
    url, name = asyncio.run(pg_database(admin))
    try:
        asyncio.run(run(url, "postgres", args.iterations))
    finally:
        asyncio.run(pg_drop(admin, name))


if __name__ == "__main__":
    main()

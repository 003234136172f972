"""Benchmark: does the conversation tree stay flat-cost as it grows to 10,000 messages deep?

Appends 10,000 turns (alternating user/assistant, with regenerations and edit-and-resend branches
along the way) to ONE conversation through the service layer, timing every append, and times
reads of the newest page of 50 on the active path when the path is 50 deep and 10,000 deep.
Prints, for SQLite and PostgreSQL:

  (a) median append at depth ~10,000 ÷ median append at depth ~10   (20 appends each)
  (b) median newest-page-of-50 read at depth 10,000 ÷ at depth 50   (41 reads each)

Target: both ≤ 1.5. PostgreSQL runs when CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL
names a server; the bench creates and drops its own database there.

    .venv/bin/python bench/tree.py [--depth 10000]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from chatmem.auth import service as auth_service  # noqa: E402
from chatmem.auth.models import Principal  # noqa: E402
from chatmem.conversations import service  # noqa: E402
from chatmem.conversations.wire import ConversationIn, MessageIn  # noqa: E402
from chatmem.db.engine import Database  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402

MAX_BYTES = 256 * 1024
WINDOW = 20  # appends timed at each end
READS = 41  # page reads timed at each depth
PAGE = 50


async def _append(db, p, cid, role, text, parent_id=None) -> tuple[dict, float]:
    body = MessageIn(content=text, role=role, generate=False, parent_id=parent_id)
    t0 = time.perf_counter()
    msg = await service.append_message(db, p, cid, body, MAX_BYTES)
    return msg, time.perf_counter() - t0


async def _read_median(db, p, cid) -> float:
    samples = []
    for _ in range(READS):
        t0 = time.perf_counter()
        page = await service.read_path(db, p, cid, before=None, limit=PAGE)
        samples.append(time.perf_counter() - t0)
        assert len(page["items"]) == PAGE
    return statistics.median(samples)


async def run(url: str, target_depth: int) -> dict:
    db = Database(url)
    try:
        user, _key = await auth_service.create_user(db, f"bench-{uuid.uuid4().hex[:6]}@example.com")
        p = Principal(id=user["id"], email=user["email"])
        # Warm-up: connections, statement caches, page cache.
        warm = await service.create_conversation(db, p, ConversationIn(title="warm-up"))
        for i in range(60):
            await _append(db, p, warm["id"], "user" if i % 2 == 0 else "assistant", f"warm {i}")

        conv = await service.create_conversation(db, p, ConversationIn(title="bench"))
        cid = conv["id"]
        shallow: list[float] = []
        deep: list[float] = []
        read_50 = read_deep = None
        depth = -1  # depth of the active leaf
        last_user = None
        i = 0
        while depth + 1 < target_depth:
            role = "user" if (depth + 1) % 2 == 0 else "assistant"
            msg, dt = await _append(db, p, cid, role, f"turn {i}: " + "lorem ipsum " * 8)
            assert msg["depth"] == depth + 1, "an append must go under the active leaf"
            depth = msg["depth"]
            if 1 <= depth <= WINDOW:
                shallow.append(dt)
            elif depth > target_depth - 1 - WINDOW:
                deep.append(dt)
            if role == "user":
                last_user = msg
            elif i % 50 == 49 and depth < target_depth - 2 * WINDOW:
                # regenerate: another answer under the same question (the path follows it)
                await _append(db, p, cid, "assistant", f"regenerated {i}", parent_id=last_user["id"])
            elif i % 200 == 199 and depth < target_depth - 2 * WINDOW:
                # edit-and-resend: a new question under the old question's parent, then its answer
                q, _ = await _append(db, p, cid, "user", f"edited {i}", parent_id=last_user["parent_id"])
                a, _ = await _append(db, p, cid, "assistant", f"answer to edited {i}")
                depth, last_user = a["depth"], q
            if depth == PAGE - 1 and read_50 is None:
                read_50 = await _read_median(db, p, cid)
            i += 1
        read_deep = await _read_median(db, p, cid)
        return {
            "depth": depth + 1,
            "append_shallow": statistics.median(shallow),
            "append_deep": statistics.median(deep),
            "read_50": read_50,
            "read_deep": read_deep,
        }
    finally:
        await db.dispose()


def _report(name: str, r: dict) -> bool:
    a = r["append_deep"] / r["append_shallow"]
    b = r["read_deep"] / r["read_50"]
    print(f"{name}: path depth {r['depth']}")
    print(f"  (a) append: median {r['append_deep'] * 1e3:.2f} ms at depth ~{r['depth']} / "
          f"{r['append_shallow'] * 1e3:.2f} ms at depth ~{WINDOW // 2} = {a:.2f}  (target <= 1.5)")
    print(f"  (b) newest page of {PAGE}: median {r['read_deep'] * 1e3:.2f} ms at depth {r['depth']} / "
          f"{r['read_50'] * 1e3:.2f} ms at depth {PAGE} = {b:.2f}  (target <= 1.5)")
    return a <= 1.5 and b <= 1.5


async def _pg_exec(admin_url: str, sql: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(admin_url)
    conn = await asyncpg.connect(host=u.host or "127.0.0.1", port=u.port or 5432,
                                 user=u.username or "postgres", password=u.password,
                                 database="postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depth", type=int, default=10_000)
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        upgrade(url)
        ok &= _report("SQLite", asyncio.run(run(url, args.depth)))
    pg = os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get("CHATMEM_TEST_POSTGRES_URL")
    if pg:
        from sqlalchemy.engine import make_url

        name = f"chatmem_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        asyncio.run(_pg_exec(pg, f'CREATE DATABASE "{name}"'))
        try:
            url = make_url(pg).set(database=name).render_as_string(hide_password=False)
            upgrade(url)
            ok &= _report("PostgreSQL", asyncio.run(run(url, args.depth)))
        finally:
            asyncio.run(_pg_exec(pg, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    else:
        print("PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: does the conversation tree stay flat-cost as it grows to 10,000 messages deep?

Appends 10,000 turns (alternating user/assistant, with regenerations and edit-and-resend branches
along the way) to ONE conversation through the service layer. Then, in the same database and
interleaved one-for-one (so both sides see the same table and the same machine load), it times
appends to that conversation (depth ~10,000) against appends to a fresh one (depth 0–20, ~10),
and newest-page-of-50 reads of it against reads of a conversation whose path is 50 deep.
Prints, for SQLite and PostgreSQL:

  (a) median append at depth ~10,000 ÷ median append at depth ~10    (21 appends each)
  (b) median newest-page-of-50 read at depth 10,000 ÷ at depth 50    (41 reads each)

Target: both ≤ 1.5. For transparency it also prints the same ratios measured while the one
conversation grew (depth 1–20 early vs the last 20 appends; page read at 50 deep vs at the end),
which also include the table growing from ~100 to ~10,000 rows and any change in machine load.

PostgreSQL runs when CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL names a server; the
bench creates and drops its own database there.

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

from chatmem.auth import service as auth_service
from chatmem.auth.models import Principal
from chatmem.conversations import service
from chatmem.conversations.wire import ConversationIn, MessageIn
from chatmem.db.engine import Database
from chatmem.db.migrate import upgrade

MAX_BYTES = 256 * 1024
WINDOW = 20  # appends timed at each depth: 21 (depth 0–20 in the fresh conversation)
READS = 41  # page reads timed at each depth
PAGE = 50


async def _append(db, p, cid, role, text, parent_id=None) -> tuple[dict, float]:
    body = MessageIn(content=text, role=role, generate=False, parent_id=parent_id)
    t0 = time.perf_counter()
    msg = await service.append_message(db, p, cid, body, MAX_BYTES)
    return msg, time.perf_counter() - t0


async def _read_median(db, p, cid, samples: int = READS) -> float:
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        page = await service.read_path(db, p, cid, before=None, limit=PAGE)
        times.append(time.perf_counter() - t0)
        assert len(page["items"]) == PAGE
    return statistics.median(times)


async def _grow(db, p, cid, n: int, tag: str) -> None:
    for i in range(n):
        await _append(db, p, cid, "user" if i % 2 == 0 else "assistant", f"{tag} {i}")


async def run(url: str, target_depth: int) -> dict:
    db = Database(url)
    try:
        user, _key = await auth_service.create_user(db, f"bench-{uuid.uuid4().hex[:6]}@example.com")
        p = Principal(id=user["id"], email=user["email"])
        # Warm-up: connections, statement caches, page cache.
        warm = await service.create_conversation(db, p, ConversationIn(title="warm-up"))
        await _grow(db, p, warm["id"], 60, "warm")

        conv = await service.create_conversation(db, p, ConversationIn(title="bench"))
        cid = conv["id"]
        grew: dict[str, list[float]] = {"shallow": [], "deep": []}
        read_50_grew = None
        depth = -1  # depth of the active leaf
        last_user = None
        i = 0
        while depth + 1 < target_depth:
            role = "user" if (depth + 1) % 2 == 0 else "assistant"
            msg, dt = await _append(db, p, cid, role, f"turn {i}: " + "lorem ipsum " * 8)
            assert msg["depth"] == depth + 1, "an append must go under the active leaf"
            depth = msg["depth"]
            if 1 <= depth <= WINDOW:
                grew["shallow"].append(dt)
            elif depth > target_depth - 1 - WINDOW:
                grew["deep"].append(dt)
            if role == "user":
                last_user = msg
            elif i % 50 == 49 and depth < target_depth - 2 * WINDOW:
                # regenerate: another answer under the same question (the path follows it)
                await _append(
                    db, p, cid, "assistant", f"regenerated {i}", parent_id=last_user["id"]
                )
            elif i % 200 == 199 and depth < target_depth - 2 * WINDOW:
                # edit-and-resend: a new question under the old question's parent, then its answer
                q, _ = await _append(
                    db, p, cid, "user", f"edited {i}", parent_id=last_user["parent_id"]
                )
                a, _ = await _append(db, p, cid, "assistant", f"answer to edited {i}")
                depth, last_user = a["depth"], q
            if depth == PAGE - 1 and read_50_grew is None:
                read_50_grew = await _read_median(db, p, cid)
            i += 1
        read_deep_grew = await _read_median(db, p, cid)

        # Interleaved, same table, same moment: only the depth differs.
        path50 = (await service.create_conversation(db, p, ConversationIn(title="50 deep")))["id"]
        await _grow(db, p, path50, PAGE, "fifty")
        reads: dict[str, list[float]] = {"50": [], "deep": []}
        for _ in range(READS):
            for key, target in (("50", path50), ("deep", cid)):
                reads[key].append(await _read_median(db, p, target, samples=1))
        fresh = (await service.create_conversation(db, p, ConversationIn(title="fresh")))["id"]
        appends: dict[str, list[float]] = {"shallow": [], "deep": []}
        for k in range(WINDOW + 1):  # the fresh conversation goes from depth 0 to 20
            role = "user" if k % 2 == 0 else "assistant"
            deep_role = "user" if (depth + 1 + k) % 2 == 0 else "assistant"
            appends["shallow"].append((await _append(db, p, fresh, role, f"fresh {k}"))[1])
            appends["deep"].append((await _append(db, p, cid, deep_role, f"deep {k}"))[1])
        med = statistics.median
        return {
            "depth": depth + 1,
            "append_shallow": med(appends["shallow"]),
            "append_deep": med(appends["deep"]),
            "read_50": med(reads["50"]),
            "read_deep": med(reads["deep"]),
            "grew_append_shallow": med(grew["shallow"]),
            "grew_append_deep": med(grew["deep"]),
            "grew_read_50": read_50_grew,
            "grew_read_deep": read_deep_grew,
        }
    finally:
        await db.dispose()


def _report(name: str, r: dict) -> bool:
    a = r["append_deep"] / r["append_shallow"]
    b = r["read_deep"] / r["read_50"]
    d = r["depth"]
    print(f"{name}: one conversation, active path {d} messages deep")
    print(
        f"  (a) append: median {r['append_deep'] * 1e3:.2f} ms at depth ~{d} / "
        f"{r['append_shallow'] * 1e3:.2f} ms at depth ~{WINDOW // 2} = {a:.2f}  (target <= 1.5)"
    )
    print(
        f"  (b) newest page of {PAGE}: median {r['read_deep'] * 1e3:.2f} ms at depth {d} / "
        f"{r['read_50'] * 1e3:.2f} ms at depth {PAGE} = {b:.2f}  (target <= 1.5)"
    )
    ga = r["grew_append_deep"] / r["grew_append_shallow"]
    gb = r["grew_read_deep"] / r["grew_read_50"]
    print(f"  while it grew (also table size and load drift): append {ga:.2f}, page read {gb:.2f}")
    return a <= 1.5 and b <= 1.5


async def _pg_exec(admin_url: str, sql: str) -> None:
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

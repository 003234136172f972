"""Search benchmark: ``GET /api/search`` with 10k vs 1M messages, through a real server.

The corpus is bulk-inserted with SQL (the index triggers index every row, as they would for rows
written by the API); the queries go through the public API of a live ``chatmem serve``. Two
shapes, each at 10k and at 1M messages:

- **own** — the searching user wrote every message (the hardest case: one user's history grows);
- **crowd** — the user has 10k messages, other users the rest (what a shared server looks like).

Queries: a rare word, a common word (in ~20 % of messages), two words, a prefix while typing, and a
Chinese word. Prints the median latency of each at both sizes and the ratio 1M / 10k (target ≤ 3).

Usage: ``.venv/bin/python bench/search.py [--small 10000] [--large 1000000] [--postgres]
[--keep DIR]``. ``--keep`` (SQLite) keeps the four databases in DIR and reuses them on the next run
(migrated to the current schema first), so the 1M corpus is built once while comparing changes.
``--baseline SRC`` serves each database with a second code tree too (``PYTHONPATH=SRC``; its schema
must be the same), in the same loop: before and after on one corpus, under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sqlalchemy import insert, select  # noqa: E402
from tests.servers import Server, create_user  # noqa: E402

from chatmem.db import schema as t  # noqa: E402
from chatmem.db.engine import Database  # noqa: E402
from chatmem.db.ids import new_id  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402
from pgtemp import temp_database  # noqa: E402

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


async def build(db_url: str, total: int, own: int) -> str:
    """Create the searching user (key returned) and bulk-insert ``total`` messages, ``own`` of
    them in that user's conversations (100 messages each)."""
    key = create_user(db_url, "searcher@example.com")
    db = Database(db_url)
    r = random.Random(7)
    now = int(time.time() * 1000)
    try:
        async with db.write() as c:
            me = (
                await c.execute(
                    select(t.users.c.id).where(t.users.c.email == "searcher@example.com")
                )
            ).scalar_one()
            others = []
            for k in range(max(1, (total - own) // 10_000)):
                uid = new_id("u")
                await c.execute(
                    insert(t.users).values(id=uid, email=f"o{k}@x.y", created_at=0, updated_at=0)
                )
                others.append(uid)
        made = 0
        while made < total:
            convs, msgs = [], []
            for _ in range(50):  # 50 conversations of 100 messages per transaction
                if made >= total:
                    break
                owner = me if made < own else others[(made - own) // 10_000 % len(others)]
                conv = new_id("c")
                convs.append(
                    dict(id=conv, user_id=owner, title="b", created_at=now, updated_at=now)
                )
                for d in range(min(100, total - made)):
                    text = _text(r, made)
                    msgs.append(
                        dict(
                            id=new_id("msg"),
                            conversation_id=conv,
                            role="user",
                            user_id=owner,
                            blocks=[{"kind": "text", "text": text}],
                            search_text=text,
                            created_at=now - (total - made),
                            depth=d,
                        )
                    )
                    made += 1
            async with db.write() as c:
                await c.execute(insert(t.conversations), convs)
                await c.execute(insert(t.messages), msgs)
    finally:
        await db.dispose()
    return key


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
                if args.keep and not args.postgres:
                    targets.append(await _kept(Path(args.keep), shape, n, args.small))
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
    ap.add_argument("--keep", metavar="DIR", help="keep and reuse the SQLite databases in DIR")
    ap.add_argument(
        "--baseline",
        metavar="SRC",
        help="also serve every database with the code in SRC (another checkout's src/, e.g. "
        "`git archive main src`), interleaved: before/after on the same corpus",
    )
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()

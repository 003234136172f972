"""Benchmark: a fork of 10,000 messages as a user meets it, over HTTP, against a real server.

Builds bench/scale.py's 10,000-deep conversation for a user made with the CLI, starts the server
(``bench/counted_server.py``: the real app) and, ``--reps`` times, forks the whole path and
opens the fork as the web app does (``POST …/fork``, then ``GET /api/conversations/{id}`` and
``GET …/messages?limit=50``), then waits until the fork's rows are all stored (the copy runs
after the answer: conversations/forks.py), then deletes the fork. It prints medians of

  answer      the fork's POST                                              (issue 18: ≤ 0.2 s)
  open        the POST and the two reads an app makes to show the fork      ≤ 0.2 s
  copied      from the POST until the fork's 10,000 rows are stored (no target: nobody waits)

``--baseline SRC`` (a ``src`` folder of another checkout, e.g. ``git archive <commit> src``) serves
the same database with that code too; the two servers alternate fork by fork (the order flips
every rep), so load drift hits both alike. SQLite, and PostgreSQL when CHATMEM_BENCH_POSTGRES_URL
or CHATMEM_TEST_POSTGRES_URL names a server.

    .venv/bin/python bench/fork_open.py [--reps 7] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
from tests.servers import create_user  # noqa: E402

import scale  # noqa: E402
from chatmem.db import schema as t  # noqa: E402
from chatmem.db.clock import now_ms  # noqa: E402
from chatmem.db.engine import Database  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402
from pgtemp import temp_database  # noqa: E402
from turn_cost import _server  # noqa: E402

COPIES = scale.DEPTH  # the active path: the chain (its side branches are off the path)


async def _setup(url: str) -> tuple[str, str]:
    """(API key, the deep conversation's id) in a migrated database."""
    key = await asyncio.to_thread(create_user, url, "fork-bench@example.com")
    db = Database(url)
    try:
        async with db.read() as c:
            q = select(t.users.c.id).where(t.users.c.email == "fork-bench@example.com")
            uid = (await c.execute(q)).scalar_one()
        state = await scale._deep(db, uid, now_ms())
    finally:
        await db.dispose()
    return key, state["deep"]


async def _stored(db: Database, cid: str) -> int:
    async with db.read() as c:
        q = select(func.count()).select_from(t.messages).where(t.messages.c.conversation_id == cid)
        return (await c.execute(q)).scalar_one()


async def _one(client: httpx.AsyncClient, db: Database, cid: str) -> dict:
    t0 = time.perf_counter()
    r = await client.post(f"/api/conversations/{cid}/fork", json={})
    answered = time.perf_counter()
    assert r.status_code == 201, r.text
    fork = r.json()["id"]
    conv = await client.get(f"/api/conversations/{fork}")
    page = await client.get(f"/api/conversations/{fork}/messages", params={"limit": 50})
    opened = time.perf_counter()
    assert conv.status_code == page.status_code == 200, (conv.text, page.text)
    assert len(page.json()["items"]) == 50 and conv.json()["message_count"] == COPIES
    while await _stored(db, fork) < COPIES:
        await asyncio.sleep(0.005)
    copied = time.perf_counter()
    r = await client.delete(f"/api/conversations/{fork}")
    assert r.status_code == 204, r.text
    return {"answer": answered - t0, "open": opened - t0, "copied": copied - t0}


async def run(url: str, reps: int, baseline: str | None) -> dict[str, dict[str, list[float]]]:
    key, cid = await _setup(url)
    names = ["new", "baseline"] if baseline else ["new"]
    servers = {n: _server(url, 40, {}, baseline if n == "baseline" else None) for n in names}
    db = Database(url)
    out: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    try:
        clients = {
            n: httpx.AsyncClient(
                base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60
            )
            for n, (_proc, base) in servers.items()
        }
        for n in names:  # a warm-up fork each
            await _one(clients[n], db, cid)
        for i in range(reps):
            for n in names if i % 2 == 0 else names[::-1]:
                for k, v in (await _one(clients[n], db, cid)).items():
                    out[n].setdefault(k, []).append(v)
        for client in clients.values():
            await client.aclose()
    finally:
        await db.dispose()
        for proc, _base in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    return out


def report(name: str, out: dict[str, dict[str, list[float]]]) -> None:
    print(f"\n{name}: a fork of {COPIES:,} messages over HTTP, medians in ms")
    print(f"  {'':10}" + "".join(f"{k:>10}" for k in ("answer", "open", "copied")))
    for n, figures in out.items():
        med = {k: statistics.median(v) * 1e3 for k, v in figures.items()}
        print(f"  {n:10}" + "".join(f"{med[k]:10.0f}" for k in ("answer", "open", "copied")))
    if "baseline" in out:
        new, old = out["new"], out["baseline"]
        for k in ("answer", "open"):
            r = statistics.median(new[k]) / statistics.median(old[k])
            print(f"  {k}: new ÷ baseline {r:.2f}")
    for k in ("answer", "open"):
        v = statistics.median(out["new"][k])
        print(f"  {name} fork {k} {v:.3f} s (target <= 0.2)  {'ok' if v <= 0.2 else 'MISS'}")


async def main_async(opts: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/fork.db"
        upgrade(url)
        report("SQLite", await run(url, opts.reps, opts.baseline))
    async with temp_database("chatmem_fork_open") as url:
        if url is None:
            print(
                "\nPostgreSQL: skipped (no CHATMEM_BENCH_POSTGRES_URL / CHATMEM_TEST_POSTGRES_URL)"
            )
            return
        report("PostgreSQL", await run(url, opts.reps, opts.baseline))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--baseline", default=None)
    asyncio.run(main_async(ap.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

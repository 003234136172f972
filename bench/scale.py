"""Benchmark: does background work and tree editing cost the same at 10k, 100k and 1M rows?

Builds one database per size (10,000 / 100,000 / 1,000,000 ``messages`` rows and as many
``stream_events`` rows, spread over 50 users, plus five orphaned ``streaming`` rows and one
conversation whose active path is 10,000 messages deep with a side branch near its root and one
near its leaf). Then, interleaved one-for-one across the sizes (so every size sees the same
machine load), it times:

  sweep      the sweeper's orphan query (generation/store.orphans)         ratio 1M ÷ 10k ≤ 2
  prune      a pruning batch of PRUNE_BATCH rows (three a rep while the smallest size has
             old rows enough), read + its write transaction; the longest
             write transaction is what blocks SQLite's writers                 ratio ≤ 2
  switch     switch_leaf to a message near the root vs near the leaf of the 10,000-deep path
             (the near-root one has the whole path below it)        near-root ÷ near-leaf ≤ 3
  delete     delete_round of a round near the root vs near the leaf (the round's children are
             reattached; nothing below them is rewritten)           near-root ÷ near-leaf ≤ 3
  fork       fork of the 10,000-message path: its answer                              ≤ 0.2 s
             and its answer plus what an app reads to open it (the conversation, the newest
             page: read from the source while the copy is pending)                     ≤ 0.2 s
             and, no target, the copy that runs after the answer (conversations/forks.py)
  del conv   delete a 10,000-message conversation (each fork made above), as the service does
             it vs the same with the engine's plan mode kept for its cascades (the code before
             ``reuse_key_check_plans``: PostgreSQL planned each message's ON DELETE queries
             again); both sides alternate in one loop, so they see the same table and load

PostgreSQL runs when CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL names a server
(the bench creates and drops its own databases).

    .venv/bin/python bench/scale.py [--sizes 10000,100000,1000000] [--reps 15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager, nullcontext
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sqlalchemy import insert

from chatmem.auth.models import Principal
from chatmem.conversations import dag, forks, service
from chatmem.conversations import store as conv_store
from chatmem.conversations.wire import ForkIn
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.db.migrate import upgrade
from chatmem.generation import events as ev
from chatmem.generation.store import orphans
from chatmem.generation.sweeper import PRUNE_BATCH
from pgtemp import temp_database

USERS = 50
CONV_LEN = 100  # background conversations are chains of this many messages
DEPTH = 10_000
CHUNK = 5_000
OLD = 24 * 3600 * 1000  # event rows this old are prunable
PRUNES_PER_REP = 3  # pruning batches timed per rep and size (fewer when the rows run out)
FORK_REPS = 5  # reps that fork (twice) and delete both copies (one each way)


def _msg(cid, uid, parent, depth, created, role=None, status="complete"):
    return {
        "id": new_id("msg"),
        "conversation_id": cid,
        "parent_id": parent,
        "role": role or ("user" if depth % 2 == 0 else "assistant"),
        "blocks": [{"kind": "text", "text": f"m{depth}"}],
        "search_text": f"m{depth}",
        "status": status,
        "created_at": created,
        "user_id": uid,
        "depth": depth,
    }


async def _insert(db: Database, table, rows: list[dict]) -> None:
    for i in range(0, len(rows), CHUNK):
        async with db.write() as c:
            await c.execute(insert(table), rows[i : i + CHUNK])


async def _conv(db: Database, uid: str, title: str, now: int) -> str:
    cid = new_id("c")
    async with db.write() as c:
        await c.execute(
            insert(t.conversations).values(
                id=cid, user_id=uid, title=title, created_at=now, updated_at=now
            )
        )
    return cid


async def _chain(db, cid, uid, n, start, parent=None, depth0=0) -> list[str]:
    rows, ids = [], []
    for d in range(n):
        r = _msg(cid, uid, parent, depth0 + d, start + d)
        rows.append(r)
        ids.append(r["id"])
        parent = r["id"]
    dag.fill_jumps(rows)  # the pointers appends write (the fork point's as if it had none)
    await _insert(db, t.messages, rows)
    return ids


async def _background(db: Database, uids: list[str], n_rows: int, base: int) -> list[str]:
    """``n_rows`` messages in chains of CONV_LEN over the users; returns each chain's last id."""
    logged: list[str] = []
    rows: list[dict] = []
    for k in range(max(1, n_rows // CONV_LEN)):
        uid = uids[k % USERS]
        cid = await _conv(db, uid, f"bg {k}", base)
        parent = None
        for d in range(CONV_LEN):
            r = _msg(cid, uid, parent, d, base + k * CONV_LEN + d)
            rows.append(r)
            parent = r["id"]
        logged.append(parent)  # the last answer of each conversation has a finished log
        if len(rows) >= CHUNK:
            await _insert(db, t.messages, rows)
            rows = []
    await _insert(db, t.messages, rows)
    return logged


async def _event_logs(db: Database, logged: list[str], n_rows: int, base: int) -> None:
    """About ``n_rows`` old event rows: one finished log per background conversation."""
    per = max(1, n_rows // len(logged))
    events: list[dict] = []
    for j, mid in enumerate(logged):
        data = {"text": "x"}
        events.extend(
            {"message_id": mid, "seq": s, "type": "delta", "data": data, "created_at": base + j}
            for s in range(1, per + 1)
        )
        if len(events) >= CHUNK:
            await _insert(db, t.stream_events, events)
            events = []
    await _insert(db, t.stream_events, events)


async def _deep(db: Database, owner: str, now: int) -> dict:
    """The 10,000-deep conversation, with a side branch near its root and one near its leaf."""
    deep = await _conv(db, owner, "deep", now)
    chain = await _chain(db, deep, owner, DEPTH, now)
    side_root = await _chain(db, deep, owner, 2, now + DEPTH, chain[5], 6)
    side_leaf = await _chain(db, deep, owner, 2, now + DEPTH + 2, chain[DEPTH - 11], DEPTH - 10)
    async with db.write() as c:
        await c.execute(
            t.conversations.update()
            .where(t.conversations.c.id == deep)
            .values(active_leaf_id=chain[-1], message_count=DEPTH + 4)
        )
    return {
        "deep": deep,
        "main": {"root": chain[6], "leaf": chain[DEPTH - 10]},
        "side": {"root": side_root[0], "leaf": side_leaf[0]},
        # rounds to delete: user messages below the near-root branch / above the near-leaf one
        "rounds": {"root": chain[20:60:2], "leaf": chain[DEPTH - 80 : DEPTH - 40 : 2]},
    }


async def fill(db: Database, n_rows: int) -> dict:
    """The background rows (many users), orphans, event logs and the 10,000-deep conversation."""
    now = now_ms()
    uids = [new_id("u") for _ in range(USERS)]
    async with db.write() as c:
        await c.execute(
            insert(t.users),
            [
                {"id": u, "email": f"{u}@example.com", "created_at": now, "updated_at": now}
                for u in uids
            ],
        )
    base = now - 2 * OLD
    logged = await _background(db, uids, n_rows, base)
    await _event_logs(db, logged, n_rows, base)
    owner = uids[0]
    cid = await _conv(db, owner, "orphans", now)
    for _ in range(5):  # streaming rows whose process died: no lease
        await _insert(db, t.messages, [_msg(cid, owner, None, 0, now, "assistant", "streaming")])
    state = await _deep(db, owner, now)
    state.update(p=Principal(id=owner, email=f"{owner}@example.com"), prune_after=None)
    return state


async def _timed(coro) -> float:
    t0 = time.perf_counter()
    await coro
    return time.perf_counter() - t0


async def _prune_batch(db: Database, state: dict) -> tuple[float, float]:
    """One pruning batch as the sweeper runs it: (whole batch s, its write transaction s)."""
    cutoff = now_ms() - OLD // 2
    t0 = time.perf_counter()
    async with db.read() as c:
        keys = await ev.oldest_rows(c, cutoff, state["prune_after"], PRUNE_BATCH)
    state["prune_after"] = keys[-1] if keys else None
    t1 = time.perf_counter()
    async with db.write() as c:
        await ev.prune_rows(c, keys, cutoff)
    t2 = time.perf_counter()
    return t2 - t0, t2 - t1


@asynccontextmanager
async def _engine_mode(_c):
    """The code before ``reuse_key_check_plans``: the cascades run with the engine's mode."""
    yield


async def _delete_conv(db: Database, p: Principal, cid: str, old: bool) -> float:
    with patch.object(conv_store, "reuse_key_check_plans", _engine_mode) if old else nullcontext():
        return await _timed(service.delete_conversation(db, p, cid))


async def _forks_deleted(db: Database, p: Principal, cid: str, o: dict, i: int) -> None:
    """Two forks of the deep path, then both copies deleted: one as the service does it, one
    the old way, in alternating order. Each fork is timed three ways: its answer (``fork``),
    its answer and what an app reads to open it — the conversation and its newest page, from
    the source while the copy is pending (``fork_open``) —, and the copy that runs after it
    (``fork_copy``: timed alone, here, instead of beside the request as ``forks.kick`` runs it,
    so that it lands in no other figure)."""
    copies = []
    for _ in range(2):
        with patch.object(forks, "kick", lambda db, cid: None):
            t0 = time.perf_counter()
            fork = (await service.fork(db, p, cid, ForkIn()))["id"]
            o["fork"].append(time.perf_counter() - t0)
            await service.get_conversation(db, p, fork)
            await service.read_path(db, p, fork, before=None, limit=50)
            o["fork_open"].append(time.perf_counter() - t0)
        o["fork_copy"].append(await _timed(forks.settle(db, fork)))
        copies.append(fork)
    for old in (True, False) if i % 2 else (False, True):
        o["del_conv_old" if old else "del_conv"].append(
            await _delete_conv(db, p, copies.pop(), old)
        )


async def _sweep(db: Database) -> None:
    async with db.read_once() as c:  # as the sweeper reads it (sweeper.Sweeper.sweep_once)
        rows = await orphans(c, now_ms())
    assert len(rows) == 5, rows


async def measure(dbs: dict[int, Database], states: dict[int, dict], reps: int) -> dict:
    """Every measurement interleaved across the sizes (and both ends of the path)."""
    out: dict = {
        n: {
            k: []
            for k in (
                "sweep",
                "prune",
                "prune_write",
                "switch_root",
                "switch_leaf",
                "delete_root",
                "delete_leaf",
                "fork",
                "fork_open",
                "fork_copy",
                "del_conv",
                "del_conv_old",
            )
        }
        for n in dbs
    }
    # a few batches a rep (a batch's few ms are noisy), as many as the smallest size's old
    # rows allow: one event row per message row, PRUNE_BATCH of them a batch
    prunes = max(1, min(PRUNES_PER_REP, min(dbs) // PRUNE_BATCH // reps))
    for i in range(reps):
        for n, db in dbs.items():
            s = states[n]
            p, cid = s["p"], s["deep"]
            o = out[n]
            o["sweep"].append(await _timed(_sweep(db)))
            for _ in range(prunes):
                whole, write = await _prune_batch(db, s)
                o["prune"].append(whole)
                o["prune_write"].append(write)
            for end in ("root", "leaf"):
                await service.switch_leaf(db, p, cid, s["side"][end])
                o[f"switch_{end}"].append(
                    await _timed(service.switch_leaf(db, p, cid, s["main"][end]))
                )
            for end in ("root", "leaf"):
                mid = s["rounds"][end][i % len(s["rounds"][end])]
                o[f"delete_{end}"].append(await _timed(service.delete_round(db, p, cid, mid)))
            if i < FORK_REPS:
                await _forks_deleted(db, p, cid, o, i)
    return out


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def report(name: str, out: dict) -> list[tuple[str, float, float]]:
    sizes = sorted(out)
    small, big = sizes[0], sizes[-1]
    ms = lambda x: f"{x * 1e3:8.2f}"  # noqa: E731
    print(f"\n{name}: medians in ms per size (rows in messages and in stream_events)")
    keys = list(out[small])
    print("  " + "".join(f"{k:>13}" for k in ["size", *keys]))
    for n in sizes:
        print("  " + f"{n:>13}" + "".join(f"{ms(_med(out[n][k])):>13}" for k in keys))
    rows = []
    for k in ("sweep", "prune", "prune_write"):
        r = _med(out[big][k]) / _med(out[small][k])
        rows.append((f"{name} {k} {big // 1000}k ÷ {small // 1000}k", r, 2.0))
    for n in sizes:
        for op in ("switch", "delete"):
            r = _med(out[n][f"{op}_root"]) / _med(out[n][f"{op}_leaf"])
            rows.append((f"{name} {op} near-root ÷ near-leaf @{n // 1000}k", r, 3.0))
        rows.append((f"{name} fork 10k messages (s) @{n // 1000}k", _med(out[n]["fork"]), 0.2))
        rows.append((f"{name} fork + open it (s) @{n // 1000}k", _med(out[n]["fork_open"]), 0.2))
    for n in sizes:
        new, old = _med(out[n]["del_conv"]), _med(out[n]["del_conv_old"])
        print(
            f"  {name} delete a 10k-message conversation @{n // 1000}k: {new * 1e3:.0f} ms "
            f"(engine's plan mode for its cascades: {old * 1e3:.0f} ms, old ÷ new {old / new:.2f})"
        )
    for n in sizes:
        print(
            f"  {name} the fork's copy, after its answer @{n // 1000}k: "
            f"{_med(out[n]['fork_copy']) * 1e3:.0f} ms (no target: nothing waits for it)"
        )
    longest = max(max(out[n]["prune_write"]) for n in sizes)
    print(f"  longest pruning write transaction: {longest * 1e3:.1f} ms")
    for label, value, target in rows:
        ok = "ok" if value <= target else "MISS"
        print(f"  {label:<46} {value:7.2f}  (target <= {target})  {ok}")
    return rows


async def run_backend(urls: dict[int, str], reps: int) -> dict:
    dbs = {n: Database(u) for n, u in urls.items()}
    try:
        states = {}
        for n, db in dbs.items():
            t0 = time.perf_counter()
            states[n] = await fill(db, n)
            print(f"  filled {n} rows in {time.perf_counter() - t0:.1f} s", flush=True)
        if dbs[min(dbs)].dialect == "postgresql":
            for db in dbs.values():
                async with db.write() as c:
                    await c.exec_driver_sql("ANALYZE")
        return await measure(dbs, states, reps)
    finally:
        for db in dbs.values():
            await db.dispose()


async def _pg(sizes: list[int], reps: int):
    async with AsyncExitStack() as stack:
        urls = {}
        for n in sizes:
            u = await stack.enter_async_context(temp_database(f"chatmem_scale_{n}"))
            if u is None:
                return None
            urls[n] = u
        return await run_backend(urls, reps)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--sqlite-only", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        urls = {n: f"sqlite:///{tmp}/scale_{n}.db" for n in sizes}
        for u in urls.values():
            upgrade(u)
        print("SQLite", flush=True)
        rows += report("SQLite", asyncio.run(run_backend(urls, args.reps)))
    if not args.sqlite_only:
        print("PostgreSQL", flush=True)
        out = asyncio.run(_pg(sizes, args.reps))
        if out is None:
            print(
                "PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL)"
            )
        else:
            rows += report("PostgreSQL", out)
    return 0 if all(v <= target for _, v, target in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

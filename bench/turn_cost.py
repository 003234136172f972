"""Benchmark: what one demo turn costs the server — statements, transactions and CPU, exactly.

Starts ``bench/counted_server.py`` (the real app with statement/transaction counters and its own
CPU time on ``/__bench/stats``) on SQLite and on PostgreSQL, runs warm-up turns, then ``--turns``
sequential demo turns over HTTP (a new conversation each: POST /api/conversations, then POST
…/messages as an event stream read to ``done``), and divides the counter deltas by the number of
turns. Issue 18's targets: ≤ 15 statements and ≤ 6 ms server CPU per demo turn. The most frequent
statements of the measured turns are printed too (what to cut next).

(The server's background services run meanwhile; a sweep every few seconds adds a few statements
to the total, which the per-turn figure includes.)

    .venv/bin/python bench/turn_cost.py [--turns 30] [--tokens 40] [--all] [--profile DIR]

``--all`` lists every statement of the measured turns with the chatmem function that ran it
(slower: CPU figures are then not comparable); ``--profile DIR`` writes a cProfile of the server
over the measured turns to ``DIR/turn_<db>.prof`` (``python -m pstats`` reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from tests.servers import chatmem_env, create_user, free_port  # noqa: E402

from chatmem.db.migrate import upgrade  # noqa: E402
from pgtemp import temp_database  # noqa: E402
from stream import turn  # noqa: E402


def _server(db_url: str, tokens: int, extra: dict) -> tuple[subprocess.Popen, str]:
    model = {"id": "demo-bench", "provider": "demo", "label": "Demo", "max_output": tokens * 2}
    env = chatmem_env(
        db_url,
        CHATMEM_DEMO_DELAY_MS="0",
        CHATMEM_DEMO_MIN_TOKENS=str(tokens),
        CHATMEM_DEFAULT_MODEL="demo-bench",
        CHATMEM_MODELS=json.dumps([model]),
        CHATMEM_RUN_WORKER="false",
        **extra,
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "counted_server.py"), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise TimeoutError("counted server did not start")


async def measure(db_url: str, turns: int, tokens: int, opts: argparse.Namespace) -> dict:
    key = create_user(db_url, f"bench-{uuid.uuid4().hex[:6]}@example.com")
    extra = {"CHATMEM_BENCH_TRACE": "1"} if opts.all else {}
    if opts.profile:
        extra["CHATMEM_BENCH_PROFILE"] = "1"
    proc, base = _server(db_url, tokens, extra)
    try:
        async with httpx.AsyncClient(
            base_url=base, timeout=120, headers={"Authorization": f"Bearer {key}"}
        ) as c:
            for _ in range(3):
                await turn(c)
            await c.post("/__bench/reset")
            before = (await c.get("/__bench/stats")).json()
            for _ in range(turns):
                *_, last, _first, _end = await turn(c)
                assert last == "done", last
            await asyncio.sleep(0.5)  # the last turn's closing writes
            after = (await c.get("/__bench/stats", params={"detail": True})).json()
            if opts.profile:
                dialect = db_url.split(":", 1)[0].split("+")[0]
                out = Path(opts.profile).resolve() / f"turn_{dialect}.prof"
                await c.post("/__bench/profile", params={"path": str(out)})
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {
        "statements": (after["statements"] - before["statements"]) / turns,
        "transactions": (after["transactions"] - before["transactions"]) / turns,
        "cpu_ms": (after["cpu_s"] - before["cpu_s"]) * 1000 / turns,
        "top": list(after["by_statement"].items())[: None if opts.all else 12],
    }


def report(name: str, r: dict, turns: int) -> None:
    print(f"{name}: per demo turn (mean of {turns} sequential turns)")
    print(f"  statements    {r['statements']:6.1f}   (target <= 15)")
    print(f"  transactions  {r['transactions']:6.1f}")
    print(f"  server CPU    {r['cpu_ms']:6.1f} ms (target <= 6)")
    print("  most frequent statements (count over the measured turns):")
    for sql, n in r["top"]:
        print(f"    {n:5d}  {sql[:200]}")


async def _pg(turns: int, tokens: int, opts: argparse.Namespace):
    async with temp_database("chatmem_turncost") as url:
        return None if url is None else await measure(url, turns, tokens, opts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--tokens", type=int, default=40)
    ap.add_argument("--all", action="store_true", help="every statement, with its caller")
    ap.add_argument("--profile", metavar="DIR", help="write a cProfile of the measured turns")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/turns.db"
        upgrade(url)
        report("SQLite", asyncio.run(measure(url, args.turns, args.tokens, args)), args.turns)
    out = asyncio.run(_pg(args.turns, args.tokens, args))
    if out is None:
        print("PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL)")
    else:
        report("PostgreSQL", out, args.turns)
    return 0


if __name__ == "__main__":
    sys.exit(main())

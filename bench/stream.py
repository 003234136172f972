"""Streaming benchmark: what chatmem adds on top of the model, measured against real servers.

Prints (ratios and distributions, never pass/fail):
1. overhead per turn — POST …/messages (Accept: text/event-stream) to the first ``text_delta``, with
   the demo provider at 0 ms per token, p50 and p95 over sequential turns;
2. relay throughput — tokens/s of one long turn through one ``chatmem serve`` process, from the
   request to ``done``, as a ratio to a bare sse-starlette endpoint sending as many tokens, one
   event each, in the same run (target ≥ 0.5);
3. 100 concurrent streams on SQLite and on PostgreSQL — every one must end with ``done`` and
   carry every token;
4. every core (``--workers-compare``): ``chatmem serve --workers 1`` vs ``--workers 2`` under 32
   clients turning in a loop (10 users), rounds interleaved (1, 2, 1, 2, …) so load drift hits
   both — turns/s and first-delta p50/p95 per worker count, and the turns/s ratio. The clients
   are ``bench/lean.py``'s (one keep-alive connection each): with httpx the load generator
   itself took ~0.5 of this box's two cores at ~140 turns/s, which the workers were measured
   against.

Usage: ``.venv/bin/python bench/stream.py [--turns 40] [--tokens 20000] [--concurrent 100]
[--workers-compare [--clients 32 --seconds 20 --rounds 2]] [--only sqlite|postgres]``. A failed
turn is named (an HTTP error and its text, or the stream's last event), not only counted.
PostgreSQL comes from CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL (a scratch database
is created and dropped); without it only SQLite runs.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import statistics
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
from tests.servers import CHATMEM, Server, chatmem_env, create_user  # noqa: E402

from lean import ERRORS as lean_errors  # noqa: E402
from lean import LeanClient  # noqa: E402

BARE_APP = """
import asyncio, json, sys
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.routing import Route

N = int(sys.argv[2])

async def events():
    yield ServerSentEvent(data=json.dumps({"assistant_message_id": "m"}), event="message_start", id="1")
    for i in range(N):
        yield ServerSentEvent(data=json.dumps({"text": " word"}), event="text_delta", id=str(i + 2))
    yield ServerSentEvent(data=json.dumps({"stop_reason": "end_turn"}), event="done", id=str(N + 2))

async def stream(request):
    return EventSourceResponse(events())

app = Starlette(routes=[Route("/stream", stream)])
if __name__ == "__main__":
    import uvicorn
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


async def read_stream(resp) -> tuple[float | None, int, str | None, float]:
    """(time of first text_delta, words the text_deltas carried, last event type, end time).

    Words, not events: the demo's tokens are words, and chatmem sends a flush's tokens as one
    ``text_delta`` (at 0 ms per token a whole answer is one or two events)."""
    first = None
    text: list[str] = []
    last = None
    buf = ""
    async for chunk in resp.aiter_text():
        buf = (buf + chunk).replace("\r\n", "\n")
        *frames, buf = buf.split("\n\n")
        for f in frames:
            for line in f.split("\n"):
                if line.startswith("event: "):
                    last = line[7:]
                    if last == "text_delta" and first is None:
                        first = time.perf_counter()
                elif line.startswith("data: ") and last == "text_delta":
                    text.append(json.loads(line[6:])["text"])
    return first, len("".join(text).split()), last, time.perf_counter()


async def turn(
    c: httpx.AsyncClient, content: str = "benchmark", key: str | None = None
) -> tuple[float, int, str | None, float, float]:
    """One turn in a new conversation (as the user of ``key``, default the client's)."""
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    cid = (await c.post("/api/conversations", json={}, headers=auth)).json()["id"]
    t0 = time.perf_counter()
    async with c.stream(
        "POST",
        f"/api/conversations/{cid}/messages",
        json={"content": content},
        headers={"Accept": "text/event-stream", **auth},
    ) as r:
        if r.status_code != 200:
            return t0, 0, f"http {r.status_code}", t0, t0
        first, n, last, end = await read_stream(r)
    return t0, n, last, first or end, end


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def start_server(db_url: str, tokens: int, args: tuple = ("--no-worker",), **env) -> Server:
    model = {
        "id": "demo-bench",
        "provider": "demo",
        "label": "Demo (bench)",
        "max_output": tokens * 2,
    }
    base = {
        "CHATMEM_DEMO_DELAY_MS": "0",
        "CHATMEM_DEMO_MIN_TOKENS": str(tokens),
        "CHATMEM_DEFAULT_MODEL": "demo-bench",
        "CHATMEM_MODELS": json.dumps([model]),
        "CHATMEM_MAX_CONCURRENT_TURNS": "1000",
        "CHATMEM_RUN_WORKER": "false",
    }
    base.update(env)
    return Server(db_url, env_extra=base, args=args).start()


def migrate(db_url: str) -> None:
    """``chatmem migrate``: the CLI's ``users create`` refuses a database that does not exist yet."""
    subprocess.run(
        [CHATMEM, "migrate"], env=chatmem_env(db_url), check=True, capture_output=True, timeout=300
    )


async def overhead(db_url: str, turns: int) -> None:
    migrate(db_url)
    key = create_user(db_url, f"bench-{uuid.uuid4().hex[:6]}@example.com")
    server = start_server(db_url, 40)
    try:
        async with httpx.AsyncClient(
            base_url=server.base, timeout=120, headers={"Authorization": f"Bearer {key}"}
        ) as c:
            await turn(c)  # warm-up
            lat = []
            for _ in range(turns):
                t0, n, last, first, _ = await turn(c)
                assert last == "done", last
                lat.append((first - t0) * 1000)
        print(
            f"  overhead POST → first text_delta over {turns} turns: "
            f"p50 {statistics.median(lat):.1f} ms, p95 {pct(lat, 95):.1f} ms"
        )
    finally:
        server.stop()


async def throughput(db_url: str, tokens: int) -> None:
    key = create_user(db_url, f"bench-{uuid.uuid4().hex[:6]}@example.com")
    server = start_server(db_url, tokens)
    from tests.servers import free_port

    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(BARE_APP)
    bare = subprocess.Popen(
        [sys.executable, f.name, str(port), str(tokens)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/nope", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        rates_cm, rates_bare = [], []
        async with (
            httpx.AsyncClient(
                base_url=server.base, timeout=600, headers={"Authorization": f"Bearer {key}"}
            ) as c,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600) as b,
        ):
            for _ in range(3):  # from the request to the end of the stream, on both sides
                start, n, last, _, end = await turn(c)
                assert last == "done" and n >= tokens, (last, n)
                rates_cm.append(n / (end - start))
                bstart = time.perf_counter()
                async with b.stream("GET", "/stream") as r:
                    _, bn, blast, bend = await read_stream(r)
                assert blast == "done" and bn == tokens
                rates_bare.append(bn / (bend - bstart))
        cm, br = max(rates_cm), max(rates_bare)
        print(
            f"  relay throughput ({tokens} tokens, one process): chatmem {cm:,.0f} tokens/s, "
            f"bare sse-starlette {br:,.0f} tokens/s → ratio {cm / br:.2f} (target ≥ 0.5)"
        )
    finally:
        bare.terminate()
        bare.wait()
        os.unlink(f.name)
        server.stop()


#: Concurrent streams come from this many users (round robin): per-user rows and locks, as in use.
USERS = 10


async def concurrent(db_url: str, n: int, tokens: int = 200) -> None:
    keys = [create_user(db_url, f"bench-{uuid.uuid4().hex[:6]}@example.com") for _ in range(USERS)]
    key = keys[0]
    server = start_server(db_url, tokens)
    try:
        limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
        async with httpx.AsyncClient(
            base_url=server.base,
            timeout=300,
            limits=limits,
            headers={"Authorization": f"Bearer {key}"},
        ) as c:
            t0 = time.perf_counter()
            results = await asyncio.gather(
                *(turn(c, f"concurrent {i}", keys[i % USERS]) for i in range(n)),
                return_exceptions=True,
            )
            wall = time.perf_counter() - t0
        errors = [
            r for r in results if isinstance(r, BaseException) or r[2] != "done" or r[1] < tokens
        ]
        ok = [r for r in results if not isinstance(r, BaseException)]
        tfirst = [(r[3] - r[0]) * 1000 for r in ok if r[2] == "done"]
        print(
            f"  {n} concurrent streams × {tokens} tokens ({USERS} users): {n - len(errors)} done, "
            f"{len(errors)} errors, wall {wall:.2f} s, first delta p50 "
            f"{statistics.median(tfirst) if tfirst else float('nan'):.0f} ms / p95 "
            f"{pct(tfirst, 95) if tfirst else float('nan'):.0f} ms"
        )
        for e in errors[:3]:
            print("    error:", e if isinstance(e, BaseException) else e[2])
    finally:
        server.stop()


async def workers_round(db_url: str, n_workers: int, keys: list[str], clients: int, seconds: float):
    """One round: a fresh ``serve --workers N`` and ``clients`` loops of turns for ``seconds``,
    each loop on its own keep-alive connection with ``bench/lean.py``'s client: httpx would cost
    the load generator ~4 ms of CPU a turn on the cores the workers are measured on."""
    server = start_server(db_url, 40, args=("--no-worker", "--workers", str(n_workers)))
    first: list[float] = []
    done = 0
    errors: list[str] = []  # what each failed turn was: an error, a status or a last event
    leans = [
        LeanClient("127.0.0.1", server.port, {"Authorization": f"Bearer {keys[i % len(keys)]}"})
        for i in range(clients)
    ]
    try:
        await leans[0].turn("warm-up")
        t0 = time.perf_counter()
        until = t0 + seconds

        async def loop(i: int) -> None:
            nonlocal done
            lean = leans[i]
            while time.perf_counter() < until:
                try:
                    start, last, first_at = await lean.turn(f"w{i}")
                except lean_errors as e:
                    errors.append(f"{type(e).__name__}: {e}")
                    await lean.close()  # a new connection for the next turn
                    continue
                if last == "done" and first_at is not None:
                    done += 1
                    first.append((first_at - start) * 1000)
                else:
                    errors.append(f"the stream ended with {last!r}")

        await asyncio.gather(*(loop(i) for i in range(clients)))
        wall = time.perf_counter() - t0
    finally:
        for lean in leans:
            await lean.close()
        server.stop()
    return done / wall, first, errors


async def workers_compare(db_url: str, clients: int, seconds: float, rounds: int) -> None:
    from chatmem.db.migrate import upgrade

    upgrade(db_url)  # the users are made before the first server starts
    keys = [create_user(db_url, f"bench-{uuid.uuid4().hex[:6]}@example.com") for _ in range(USERS)]
    rate: dict[int, list[float]] = {1: [], 2: []}
    firsts: dict[int, list[float]] = {1: [], 2: []}
    errs: dict[int, list[str]] = {1: [], 2: []}
    for _ in range(rounds):
        for n in (1, 2):
            r, f, e = await workers_round(db_url, n, keys, clients, seconds)
            rate[n].append(r)
            firsts[n] += f
            errs[n] += e
    for n in (1, 2):
        print(
            f"  serve --workers {n}, {clients} clients: {statistics.mean(rate[n]):.1f} turns/s "
            f"(rounds {', '.join(f'{x:.1f}' for x in rate[n])}), first delta p50 "
            f"{statistics.median(firsts[n]):.0f} ms / p95 {pct(firsts[n], 95):.0f} ms, "
            f"{len(errs[n])} errors"
        )
        for what, count in collections.Counter(errs[n]).most_common(3):
            print(f"    {count} × {what}")
    print(
        f"  turns/s ratio 2 workers ÷ 1: {statistics.mean(rate[2]) / statistics.mean(rate[1]):.2f}"
        f" (this machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )


async def pg_database(admin_url: str, name: str, drop: bool = False) -> str:
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
        if drop:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return u.set(database=name).render_as_string(hide_password=False)


async def parts(label: str, db_url: str, args: argparse.Namespace) -> None:
    """The asked-for parts on one database (the raw throughput, part 2, on SQLite only)."""
    print(f"{label}:")
    if args.workers_compare:
        await workers_compare(db_url, args.clients, args.seconds, args.rounds)
        return
    await overhead(db_url, args.turns)
    if label == "SQLite":
        await throughput(db_url, args.tokens)
    await concurrent(db_url, args.concurrent)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--tokens", type=int, default=20000)
    ap.add_argument("--concurrent", type=int, default=100)
    ap.add_argument("--workers-compare", action="store_true", help="only part 4: --workers 1 vs 2")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", choices=("sqlite", "postgres"), help="one database, not both")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="chatmem-bench-")
    sqlite_url = f"sqlite:///{tmp}/bench.db"
    if args.only != "postgres":
        await parts("SQLite", sqlite_url, args)
    admin = os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get(
        "CHATMEM_TEST_POSTGRES_URL"
    )
    if args.only == "sqlite":
        return
    if admin:
        name = f"chatmem_bench_{uuid.uuid4().hex[:8]}"
        pg = await pg_database(admin, name)
        try:
            await parts("PostgreSQL", pg, args)
        finally:
            await pg_database(admin, name, drop=True)
    else:
        print("PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL)")


if __name__ == "__main__":
    asyncio.run(main())

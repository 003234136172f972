"""Soak: two API replicas and two workers on one PostgreSQL under mixed load, for a while.

Why it exists: "N replicas on one PostgreSQL" must hold for minutes, not for one request: no
errors, latency that does not creep, jobs that keep up, processes that do not grow. This starts
2 × ``chatmem serve --no-worker --workers 1`` and 2 × ``chatmem worker`` (real processes, loopback only) on a
throw-away database, drives a bounded mixed load through both replicas (turns on the demo
provider, conversation lists, message pages, search, memories), and prints:

- requests and errors by operation, latency p50/p95/p99 per operation, turn completion time;
- job lag (due → claimed, the workers' ``chatmem_job_lag_seconds``) and the oldest due job seen;
- RSS of each process at the end of warm-up and at the end, and the growth.

    .venv/bin/python bench/soak.py                      # 10 minutes
    .venv/bin/python bench/soak.py --duration 180       # shorter
Needs CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chatmem.auth import service as auth_service
from chatmem.db.engine import Database
from pgtemp import temp_database

CHATMEM = str(Path(sys.executable).with_name("chatmem"))
WORDS = "lighthouse harbour granite ferry tide compass lantern gull beacon reef".split()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start(db_url: str, args: list[str], admin_port: int) -> subprocess.Popen:
    env = dict(
        os.environ,
        CHATMEM_DATABASE_URL=db_url,
        CHATMEM_DEMO_DELAY_MS="5",
        CHATMEM_ADMIN_LISTEN=f"127.0.0.1:{admin_port}",
        CHATMEM_LOG_LEVEL="warning",
        CHATMEM_WORKER_HEARTBEAT_S="2",
    )
    return subprocess.Popen([CHATMEM, *args], env=env, stdout=subprocess.DEVNULL)


async def wait_healthy(base: str, proc: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as c:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
            try:
                if (await c.get(f"{base}/api/health", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.3)
    raise TimeoutError(base)


class Load:
    def __init__(self, bases: list[str], keys: list[str]) -> None:
        self.bases, self.keys = bases, keys
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.turn_s: list[float] = []

    async def timed(self, op: str, coro):
        t = time.perf_counter()
        try:
            r = await coro
        except httpx.HTTPError as e:
            self.errors[f"{op} {type(e).__name__}"] += 1
            return None
        self.lat[op].append(time.perf_counter() - t)
        if r.status_code >= 400:
            self.errors[f"{op} {r.status_code}"] += 1
            return None
        return r

    async def client_loop(self, i: int, until: float) -> None:
        headers = {"Authorization": f"Bearer {self.keys[i % len(self.keys)]}"}
        conversations: list[str] = []
        async with httpx.AsyncClient(headers=headers, timeout=60) as c:
            n = 0
            while time.monotonic() < until:
                base = self.bases[n % len(self.bases)]  # alternate the replicas
                n += 1
                roll = random.random()
                if roll < 0.3 or not conversations:
                    await self.turn(c, base, conversations)
                elif roll < 0.5:
                    await self.timed("list", c.get(f"{base}/api/conversations"))
                elif roll < 0.75:
                    cid = random.choice(conversations)
                    await self.timed("page", c.get(f"{base}/api/conversations/{cid}/messages"))
                elif roll < 0.9:
                    q = random.choice(WORDS)
                    await self.timed("search", c.get(f"{base}/api/search", params={"q": q}))
                else:
                    text = f"I keep a {random.choice(WORDS)} on my desk ({n})."
                    body = {"memory_text": text}
                    await self.timed("memory", c.post(f"{base}/api/me/memories", json=body))
                await asyncio.sleep(random.uniform(0.05, 0.3))  # bounded: think time

    async def turn(self, c: httpx.AsyncClient, base: str, conversations: list[str]) -> None:
        if not conversations or random.random() < 0.2:
            r = await self.timed("create", c.post(f"{base}/api/conversations", json={}))
            if r is None:
                return
            conversations.append(r.json()["id"])
        cid = random.choice(conversations[-5:])
        content = " ".join(random.choices(WORDS, k=12))
        t = time.perf_counter()
        r = await self.timed(
            "turn", c.post(f"{base}/api/conversations/{cid}/messages", json={"content": content})
        )
        if r is None:
            return
        mid = r.json()["assistant_message_id"]
        other = self.bases[(self.bases.index(base) + 1) % len(self.bases)]  # read on the other
        for _ in range(600):
            m = await self.timed("poll", c.get(f"{other}/api/conversations/{cid}/messages/{mid}"))
            if m is not None and m.json()["status"] != "streaming":
                if m.json()["status"] != "complete":
                    self.errors[f"turn ended {m.json()['status']}"] += 1
                self.turn_s.append(time.perf_counter() - t)
                return
            await asyncio.sleep(0.1)
        self.errors["turn never finished"] += 1


async def worker_metrics(ports: list[int]) -> tuple[float, float, float]:
    """(lag sum, lag count, oldest due age now) over the workers' admin listeners."""
    lag_sum = lag_n = oldest = 0.0
    async with httpx.AsyncClient(timeout=5) as c:
        for p in ports:
            try:
                text = (await c.get(f"http://127.0.0.1:{p}/metrics")).text
            except httpx.HTTPError:
                continue
            for fam in text_string_to_metric_families(text):
                for s in fam.samples:
                    if s.name == "chatmem_job_lag_seconds_sum":
                        lag_sum += s.value
                    elif s.name == "chatmem_job_lag_seconds_count":
                        lag_n += s.value
                    elif s.name == "chatmem_jobs_oldest_due_age_seconds":
                        oldest = max(oldest, s.value)
    return lag_sum, lag_n, oldest


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


async def soak(db_url: str, duration: float, clients: int) -> bool:
    db = Database(db_url)
    keys = [(await auth_service.create_user(db, f"soak{i}@example.com"))[1] for i in range(4)]
    await db.dispose()
    api_ports = [free_port(), free_port()]
    admin_ports = [free_port() for _ in range(4)]
    procs = {
        f"api-{i + 1}": start(
            db_url,
            ["serve", "--no-worker", "--workers", "1", "--port", str(api_ports[i])],
            admin_ports[i],
        )
        for i in range(2)
    }
    procs.update(
        {f"worker-{i + 1}": start(db_url, ["worker"], admin_ports[2 + i]) for i in range(2)}
    )
    bases = [f"http://127.0.0.1:{p}" for p in api_ports]
    try:
        started = time.monotonic()
        for b, name in zip(bases, ("api-1", "api-2"), strict=True):
            await wait_healthy(b, procs[name])
        for p, name in zip(admin_ports[2:], ("worker-1", "worker-2"), strict=True):
            await wait_healthy(f"http://127.0.0.1:{p}", procs[name])
        print(f"4 processes healthy after {time.monotonic() - started:.0f} s", flush=True)
        load = Load(bases, keys)
        t0 = time.monotonic()
        warm = min(60.0, duration * 0.1)
        until = t0 + duration
        tasks = [asyncio.create_task(load.client_loop(i, until)) for i in range(clients)]
        await asyncio.sleep(warm)
        rss0 = {n: rss_mb(p.pid) for n, p in procs.items()}
        oldest_max = 0.0
        while time.monotonic() < until:
            await asyncio.sleep(min(10.0, max(0.1, until - time.monotonic())))
            oldest_max = max(oldest_max, (await worker_metrics(admin_ports[2:]))[2])
        await asyncio.gather(*tasks)
        await asyncio.sleep(3)  # the last follow-up jobs
        lag_sum, lag_n, oldest_end = await worker_metrics(admin_ports[2:])
        rss1 = {n: rss_mb(p.pid) for n, p in procs.items()}
        alive = {n: p.poll() is None for n, p in procs.items()}
        errors = report(
            load, time.monotonic() - t0, clients, lag_sum, lag_n, oldest_max, oldest_end
        )
        print("\nprocess    RSS after warm-up  RSS at end  growth   alive")
        for n in procs:
            grow = rss1[n] - rss0[n]
            print(f"{n:<10} {rss0[n]:>12.1f} MB {rss1[n]:>8.1f} MB {grow:>+7.1f} MB  {alive[n]}")
        return errors == 0 and all(alive.values()) and lag_n > 0
    finally:
        for p in procs.values():
            p.terminate()
        for p in procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def report(load: Load, elapsed, clients, lag_sum, lag_n, oldest_max, oldest_end) -> int:
    """Print the figures; the number of failed requests."""
    total = sum(len(v) for v in load.lat.values())
    errors = sum(load.errors.values())
    print(f"soak: {elapsed:.0f} s, {clients} clients, 2 API replicas + 2 workers, one PostgreSQL")
    print(f"requests {total:,} ({total / elapsed:.1f}/s), errors {errors}")
    for k, v in sorted(load.errors.items()):
        print(f"  error {k}: {v}")
    print("\noperation      n     p50 ms   p95 ms   p99 ms")
    for op, xs in sorted(load.lat.items()):
        print(
            f"{op:<8} {len(xs):>7} {pct(xs, 0.5):>9.1f} {pct(xs, 0.95):>8.1f} {pct(xs, 0.99):>8.1f}"
        )
    ts = load.turn_s
    if ts:
        print(
            f"turn completion (POST → complete, read on the other replica): n={len(ts)} "
            f"p50 {pct(ts, 0.5):.0f} ms, p95 {pct(ts, 0.95):.0f} ms, max {max(ts) * 1000:.0f} ms"
        )
    mean_lag = lag_sum / lag_n * 1000 if lag_n else float("nan")
    print(
        f"job lag (due → claimed): {int(lag_n)} jobs, mean {mean_lag:.0f} ms; oldest due job "
        f"seen {oldest_max:.1f} s, at the end {oldest_end:.1f} s"
    )
    if ts:
        print(f"turn completion stdev {statistics.pstdev(ts) * 1000:.0f} ms")
    return errors


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=600, help="seconds of load (default 600)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent simulated users")
    args = ap.parse_args()
    async with temp_database("chatmem_soak") as url:
        if url is None:
            sys.exit("needs CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL")
        ok = await soak(url, args.duration, args.clients)
    print("verdict:", "ok" if ok else "FAILED (errors, a dead process or no job ran)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    asyncio.run(main())

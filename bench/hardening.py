"""Hardening figures (issue 10), against real ``chatmem serve`` processes, printed as ratios
against a baseline measured in the same run:

1. ``/api/health`` latency idle vs under 40 concurrent wrong-password logins (argon2 runs on the
   CPU pool; the logins are also rate limited — the 429s are counted): p50/p95 and the ratio.
2. Server memory (RSS) before and after one unauthenticated 100 MB POST (refused by the body
   limit before it is read) vs after a 1 KB POST.
3. The cost of showing only saved text: with 30 concurrent streams, the delay from a token's
   production (the demo model's ``clock`` option) to a client receiving it — p50/p95/max.

Run: ``python bench/hardening.py`` (SQLite; ``--postgres URL`` for PostgreSQL too; ``--only
logins`` for one part). On a loaded box a wave of 40 argon2 hashes on one core takes tens of
seconds, so the clients wait up to 5 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from tests.servers import Server, create_user  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


async def health_samples(base: str, n: int) -> list[float]:
    out = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        for _ in range(n):
            t0 = time.perf_counter()
            r = await c.get("/api/health")
            out.append((time.perf_counter() - t0) * 1000)
            assert r.status_code == 200
            await asyncio.sleep(0.01)
    return out


async def login_storm(base: str, email: str, n: int, stop: asyncio.Event, codes: list[int]):
    """Waves of ``n`` concurrent wrong-password logins (half for a real account, half for
    unknown ones), the next wave when the last has answered."""

    async def one(c, i: int):
        who = email if i % 2 else f"x{i}@example.com"
        r = await c.post("/api/auth/login", json={"email": who, "password": "wrong"})
        codes.append(r.status_code)

    async with httpx.AsyncClient(base_url=base, timeout=300) as c:
        while not stop.is_set():
            await asyncio.gather(*(one(c, i) for i in range(n)))


async def logins(db_url: str) -> None:
    env = {"CHATMEM_LOGIN_RATE_PER_IP": "100000/minute", "CHATMEM_LOGIN_FAILURES_PER_ACCOUNT": ""}
    create_user(db_url, "victim@example.com", password="a long password indeed")
    for label, extra in (("unlimited", env), ("default limits", {})):
        server = Server(db_url, env_extra=extra).start()
        try:
            idle = await health_samples(server.base, 100)
            stop, codes = asyncio.Event(), []
            storm = asyncio.create_task(
                login_storm(server.base, "victim@example.com", 40, stop, codes)
            )
            await asyncio.sleep(1.0)
            busy = await health_samples(server.base, 100)
            stop.set()
            await storm
        finally:
            server.stop()
        print(
            f"  health under 40 concurrent bad logins ({label}): idle p50 {pct(idle, 0.5):.1f} ms "
            f"p95 {pct(idle, 0.95):.1f} ms | busy p50 {pct(busy, 0.5):.1f} ms p95 "
            f"{pct(busy, 0.95):.1f} ms (target < 100) | p95 ratio {pct(busy, 0.95) / pct(idle, 0.95):.1f}"
            f" | logins {len(codes)}: {codes.count(401)}×401 {codes.count(429)}×429"
        )


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def post_raw(port: int, size: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(
            b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {size}\r\n\r\n".encode()
        )
        sent = 0
        chunk = b"x" * 65536
        try:
            while sent < size:
                s.sendall(chunk[: size - sent])
                sent += min(len(chunk), size - sent)
        except OSError:
            pass
        try:
            return s.recv(200)
        except OSError:
            return b""


def body_limit(db_url: str) -> None:
    server = Server(db_url).start()
    try:
        pid = server.proc.pid
        base = rss_mb(pid)
        post_raw(server.port, 1024)
        small = rss_mb(pid)
        head = post_raw(server.port, 100 * 2**20)
        big = rss_mb(pid)
    finally:
        server.stop()
    print(
        f"  100 MB unauthenticated POST: answered {head.split(b' ')[1].decode() if head else '?'}; "
        f"RSS {base:.0f} → {small:.0f} MB after 1 KB, → {big:.0f} MB after 100 MB "
        f"(growth ratio {(big - base + 1) / (small - base + 1):.1f})"
    )


class Reader(threading.Thread):
    def __init__(self, url: str, key: str) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.delays = url, key, []

    def run(self) -> None:
        buf = ""
        with httpx.stream(
            "GET", self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=120
        ) as r:
            for chunk in r.iter_text():
                now = time.time_ns() // 1_000_000
                buf += chunk
                *frames, buf = buf.split("\n\n")
                for f in frames:
                    if "event: text_delta" in f:
                        for w in json.loads(f.split("data: ", 1)[1])["text"].split():
                            self.delays.append(now - int(w[1:]))
                if len(self.delays) > 150:
                    return


def delivery(db_url: str, streams: int = 30) -> None:
    env = {
        "CHATMEM_MODELS": json.dumps(
            [{"id": "clock", "provider": "demo", "options": {"clock": True}}]
        ),
        "CHATMEM_DEFAULT_MODEL": "clock",
        "CHATMEM_DEMO_DELAY_MS": "20",
        "CHATMEM_DEMO_MIN_TOKENS": "400",
        "CHATMEM_MAX_CONCURRENT_TURNS": "100",
    }
    key = create_user(db_url, f"d{uuid.uuid4().hex[:6]}@example.com")
    server = Server(db_url, env_extra=env).start()
    try:
        readers = []
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"}) as c:
            for i in range(streams):
                cid = c.post("/api/conversations", json={}).json()["id"]
                mid = c.post(f"/api/conversations/{cid}/messages", json={"content": f"{i}"}).json()[
                    "assistant_message_id"
                ]
                readers.append(
                    Reader(f"{server.base}/api/conversations/{cid}/messages/{mid}/stream", key)
                )
        for r in readers:
            r.start()
        for r in readers:
            r.join(timeout=120)
    finally:
        server.stop()
    d = [x for r in readers for x in r.delays]
    print(
        f"  token produced → shown (only saved text is shown), {streams} streams: p50 "
        f"{statistics.median(d):.0f} ms, p95 {pct(d, 0.95):.0f} ms, max {max(d)} ms "
        f"(so unsaved-but-seen text after a SIGKILL is 0 ms by construction)"
    )


def fresh_sqlite() -> str:
    d = tempfile.mkdtemp(prefix="chatmem-bench-")
    url = f"sqlite:///{d}/bench.db"
    os.environ.setdefault("CHATMEM_DEMO_DELAY_MS", "0")
    return url


def run_parts(url: str, only: str | None) -> None:
    from chatmem.db.migrate import upgrade

    upgrade(url)
    if only in (None, "logins"):
        asyncio.run(logins(url))
    if only in (None, "body"):
        body_limit(url)
    if only in (None, "delivery"):
        delivery(url)


async def on_temp_postgres(only: str | None) -> None:
    """The PostgreSQL half runs in a throw-away database (never in the server's own)."""
    from pgtemp import temp_database

    async with temp_database("chatmem_hardening") as url:
        assert url is not None
        await asyncio.to_thread(run_parts, url, only)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--postgres",
        default=os.environ.get("CHATMEM_BENCH_POSTGRES_URL", ""),
        help="a PostgreSQL server URL: the run creates and drops its own database there",
    )
    ap.add_argument("--only", choices=("logins", "body", "delivery"), default=None)
    args = ap.parse_args()
    print("[sqlite]")
    run_parts(fresh_sqlite(), args.only)
    if args.postgres:
        print("[postgres]")
        os.environ["CHATMEM_BENCH_POSTGRES_URL"] = args.postgres
        asyncio.run(on_temp_postgres(args.only))


if __name__ == "__main__":
    main()

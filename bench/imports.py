"""Benchmark: a 100,000-message ChatGPT import — peak memory and messages per second.

Writes a synthetic ``conversations.json`` (1,000 conversations × 100 messages with regenerated
branches and hidden system nodes, ~70 MB), then, each in a fresh process so peak RSS is its own:

  (a) baseline memory: ``json.load`` of the file (what an importer that reads it whole needs);
  (b) the import: ``run_import`` into a fresh database (streamed parse, tree repair, one
      transaction per conversation with multi-row inserts, provenance, follow-up jobs);
  (c) baseline speed: inserting the same message rows, prebuilt, through the same bulk insert
      (no parsing, no repair, no provenance) — the floor of any importer on this database.

Prints, for SQLite and PostgreSQL: peak RSS of (b) ÷ (a) (target well below 1: the import's
memory does not grow with the file), the file size ÷ (b)'s RSS growth, messages/s of (b), and
(b)'s time ÷ (c)'s time (the cost of doing it right). PostgreSQL runs when
CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL names a server.

    .venv/bin/python bench/imports.py [--conversations 1000] [--per 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from tests.port_support import write_chatgpt_export  # noqa: E402

from chatmem.auth import service as auth_service  # noqa: E402
from chatmem.config import Settings  # noqa: E402
from chatmem.db import schema as t  # noqa: E402
from chatmem.db.clock import now_ms  # noqa: E402
from chatmem.db.engine import Database  # noqa: E402
from chatmem.db.ids import new_id  # noqa: E402
from chatmem.db.migrate import upgrade  # noqa: E402
from chatmem.portability import importer, store  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def child_import(url: str, path: str, tmp: str) -> dict:
    s = Settings(database_url=url, transfer_dir=tmp, run_worker=False)
    db = Database(url)
    try:
        user, _key = await auth_service.create_user(db, f"b-{uuid.uuid4().hex[:6]}@example.com")
        base = peak_rss_mb()
        t0 = time.perf_counter()
        out = await importer.create_import(
            db, s, user["id"], None, filename="c.json", local_path=path, queue=False
        )
        out = await importer.run_import(db, s, out["id"])
        dt = time.perf_counter() - t0
    finally:
        await db.dispose()
    assert out["status"] == "done", out
    return {
        "seconds": dt,
        "messages": out["report"]["messages"]["imported"],
        "rss_mb": peak_rss_mb(),
        "rss_before_mb": base,
    }


async def child_bulk(url: str, conversations: int, per: int) -> dict:
    """The same number of rows, prebuilt, through the same insert: the floor."""
    db = Database(url)
    try:
        user, _key = await auth_service.create_user(db, f"b-{uuid.uuid4().hex[:6]}@example.com")
        uid = user["id"]
        text = "x " * 120
        t0 = time.perf_counter()
        for _ in range(conversations):
            cid, now = new_id("c"), now_ms()
            rows, parent = [], None
            for i in range(per):
                mid = new_id("msg")
                rows.append(
                    dict(
                        id=mid,
                        conversation_id=cid,
                        parent_id=parent,
                        role="user" if i % 2 == 0 else "assistant",
                        blocks=[{"kind": "text", "text": text}],
                        search_text=text,
                        created_at=now + i,
                        user_id=uid,
                        depth=i,
                        metadata={},
                    )
                )
                parent = mid
            async with db.write() as c:
                await c.execute(
                    insert(t.conversations).values(
                        id=cid, user_id=uid, created_at=now, updated_at=now, message_count=per
                    )
                )
                await store.insert_messages(c, rows)
        dt = time.perf_counter() - t0
    finally:
        await db.dispose()
    return {"seconds": dt, "messages": conversations * per, "rss_mb": peak_rss_mb()}


def child_naive(path: str) -> dict:
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    n = sum(len(c["mapping"]) for c in data)
    return {"seconds": time.perf_counter() - t0, "nodes": n, "rss_mb": peak_rss_mb()}


def spawn(*args: str) -> dict:
    r = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def report(name: str, url: str, path: Path, args, tmp: str) -> None:
    upgrade(url)
    naive = spawn("naive", str(path))
    imp = spawn("import", url, str(path), tmp)
    bulk = spawn("bulk", url, str(args.conversations), str(args.per))
    size_mb = path.stat().st_size / 1e6
    grew = max(imp["rss_mb"] - imp["rss_before_mb"], 0.1)
    print(f"{name}: {imp['messages']:,} messages from a {size_mb:.0f} MB export")
    print(
        f"  peak RSS: import {imp['rss_mb']:.0f} MB, json.load baseline {naive['rss_mb']:.0f} MB"
        f"  → ratio {imp['rss_mb'] / naive['rss_mb']:.2f}"
    )
    print(f"  file size ÷ import's RSS growth during the run: {size_mb / grew:.1f}")
    rate = imp["messages"] / imp["seconds"]
    floor = bulk["messages"] / bulk["seconds"]
    print(
        f"  speed: {rate:,.0f} messages/s ({imp['seconds']:.1f} s); bare bulk insert "
        f"{floor:,.0f} messages/s → import ÷ bulk time {imp['seconds'] / bulk['seconds']:.2f}"
    )


async def _pg_exec(admin_url: str, sql: str) -> None:
    import asyncpg

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
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        mode, rest = sys.argv[2], sys.argv[3:]
        if mode == "naive":
            out = child_naive(rest[0])
        elif mode == "import":
            out = asyncio.run(child_import(*rest))
        else:
            out = asyncio.run(child_bulk(rest[0], int(rest[1]), int(rest[2])))
        print(json.dumps(out))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--per", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conversations.json"
        n = write_chatgpt_export(path, args.conversations, args.per)
        print(f"synthetic export: {n:,} visible messages, {path.stat().st_size / 1e6:.0f} MB")
        report("SQLite", f"sqlite:///{tmp}/bench.db", path, args, tmp)
        pg = os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get(
            "CHATMEM_TEST_POSTGRES_URL"
        )
        if pg:
            name = f"chatmem_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
            asyncio.run(_pg_exec(pg, f'CREATE DATABASE "{name}"'))
            try:
                url = make_url(pg).set(database=name).render_as_string(hide_password=False)
                report("PostgreSQL", url, path, args, tmp)
            finally:
                asyncio.run(_pg_exec(pg, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        else:
            print(
                "PostgreSQL: skipped (set CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

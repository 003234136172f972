"""Write tests/data/upgrade/: a chatmem database of one schema revision, with data, that
tests/test_upgrade.py migrates forward to head and reads back.

Why it exists: "a database made by the previous release migrates forward with data intact" is a
promise only a real old database can test. The committed fixture stays at the revision it was
made at, so the NEXT migration someone adds runs on it in the test. Regenerate it (this script)
only after a release, never in the commit that adds a migration — that would test nothing.

    .venv/bin/python tools/make_upgrade_fixture.py            # SQLite file + PostgreSQL dump

The PostgreSQL half needs CHATMEM_TEST_POSTGRES_URL (an admin URL) and pg_dump on PATH; it is a
plain-SQL dump with INSERTs (loadable without psql) minus psql's backslash commands.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatmem.app import create_app  # noqa: E402
from chatmem.auth import service as auth_service  # noqa: E402
from chatmem.config import Settings  # noqa: E402
from chatmem.db import migrate  # noqa: E402
from chatmem.ops.backup import libpq  # noqa: E402
from chatmem.ops.store import online_copy  # noqa: E402

OUT = ROOT / "tests" / "data" / "upgrade"
EMAIL = "upgrade@example.com"
PASSWORD = "upgrade-fixture-pw"
MEMORY = "The user's cat is called Orzo and is afraid of the vacuum cleaner."
PROMPTS = ("Tell me about lighthouses on the Baltic coast.", "And which one is the oldest?")


async def finished(client: httpx.AsyncClient, cid: str, mid: str) -> None:
    for _ in range(500):
        m = (await client.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        if m["status"] != "streaming":
            return
        await asyncio.sleep(0.02)
    raise RuntimeError("a demo turn never finished")


async def fill(url: str) -> dict:
    """Data through the API as a user makes it; returns what the test must find again."""
    settings = Settings(database_url=url, demo_delay_ms=0, job_poll_interval_s=0.05)
    application = create_app(settings)
    rt = application.state.runtime
    async with application.router.lifespan_context(application):
        user, key = await auth_service.create_user(rt.db, EMAIL, "Upgrade", PASSWORD)
        transport = httpx.ASGITransport(app=application)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://t", headers=headers
        ) as c:
            conv = (await c.post("/api/conversations", json={"title": "Lighthouses"})).json()
            for prompt in PROMPTS:
                r = await c.post(
                    f"/api/conversations/{conv['id']}/messages", json={"content": prompt}
                )
                r.raise_for_status()
                await finished(c, conv["id"], r.json()["assistant_message_id"])
            (await c.post("/api/me/memories", json={"memory_text": MEMORY})).raise_for_status()
            await asyncio.sleep(1.0)  # the follow-up jobs (title, extraction) run
            page = (await c.get(f"/api/conversations/{conv['id']}/messages")).json()
    return {
        "revision": migrate.head(),
        "email": EMAIL,
        "password": PASSWORD,
        "key": key,
        "user_id": user["id"],
        "conversation_id": conv["id"],
        "messages": [{"id": m["id"], "role": m["role"], "text": m["text"]} for m in page["items"]],
        "memory": MEMORY,
    }


def sqlite_fixture() -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "chatmem.db"
        url = f"sqlite:///{path}"
        migrate.upgrade(url)
        manifest = asyncio.run(fill(url))
        target = OUT / "chatmem-sqlite.db"
        target.unlink(missing_ok=True)
        online_copy(path, target)
        conn = sqlite3.connect(target)
        conn.execute("VACUUM")
        conn.close()
    return manifest


def pg_fixture(admin: str) -> dict:
    name = f"chatmem_fixture_{uuid.uuid4().hex[:6]}"
    plain = admin.rsplit("/", 1)[0]

    async def sql(statement: str) -> None:
        conn = await asyncpg.connect(f"{plain}/postgres")
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(sql(f'CREATE DATABASE "{name}"'))
    url = f"{plain}/{name}"
    try:
        migrate.upgrade(url)
        manifest = asyncio.run(fill(url))
        target, env = libpq(url)
        dump = subprocess.run(
            ["pg_dump", "--inserts", "--no-owner", "--no-privileges", f"--dbname={target}"],
            capture_output=True, text=True, env=env, check=True,
        ).stdout  # fmt: skip
        lines = [ln for ln in dump.splitlines() if not ln.startswith("\\")]
        (OUT / "chatmem-postgresql.sql").write_text("\n".join(lines) + "\n", "utf-8")
    finally:
        asyncio.run(sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    return manifest


def main() -> None:
    if shutil.which("pg_dump") is None or not os.environ.get("CHATMEM_TEST_POSTGRES_URL"):
        sys.exit("needs pg_dump and CHATMEM_TEST_POSTGRES_URL (both fixtures are made together)")
    OUT.mkdir(parents=True, exist_ok=True)
    manifests = {
        "sqlite": sqlite_fixture(),
        "postgresql": pg_fixture(os.environ["CHATMEM_TEST_POSTGRES_URL"]),
    }
    (OUT / "manifest.json").write_text(json.dumps(manifests, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} at revision {migrate.head()}")


if __name__ == "__main__":
    main()

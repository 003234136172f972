"""A throw-away PostgreSQL database for a benchmark: created, migrated, dropped afterwards.

The server comes from CHATMEM_BENCH_POSTGRES_URL or CHATMEM_TEST_POSTGRES_URL; without either,
``temp_database`` yields None and the benchmark runs on SQLite only.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.engine import make_url

from chatmem.db.migrate import upgrade


def server_url() -> str | None:
    return os.environ.get("CHATMEM_BENCH_POSTGRES_URL") or os.environ.get(
        "CHATMEM_TEST_POSTGRES_URL"
    )


@asynccontextmanager
async def temp_database(prefix: str) -> AsyncIterator[str | None]:
    pg = server_url()
    if not pg:
        yield None
        return
    u = make_url(pg)
    name = f"{prefix}_{uuid.uuid4().hex[:6]}"
    admin = dict(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database="postgres",
    )
    conn = await asyncpg.connect(**admin)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    url = u.set(database=name).render_as_string(hide_password=False)
    try:
        await asyncio.to_thread(upgrade, url)
        yield url
    finally:
        conn = await asyncpg.connect(**admin)
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()

"""Helpers for the conversation-tree tests: terse HTTP calls and direct row reads.

Kept out of conftest so each test file reads top to bottom; the database helpers read rows with
SQLAlchemy Core through the app's own ``Database`` (no mocks: the real SQLite/PostgreSQL).
"""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from chatmem.db import schema as t


async def new_conv(client, **body) -> dict:
    r = await client.post("/api/conversations", json=body)
    assert r.status_code == 201, r.text
    return r.json()


LEAF = object()  # say(..., parent=LEAF): omit parent_id (append under the active leaf)


async def say(client, cid: str, text, role: str = "user", parent=LEAF, **extra) -> dict:
    """Append a log-mode message (no generation) and return it; ``parent=None`` makes a root."""
    body = {"content": text, "role": role, "generate": False, **extra}
    if parent is not LEAF:
        body["parent_id"] = parent
        body["branch"] = True
    r = await client.post(f"/api/conversations/{cid}/messages", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def conv(client, cid: str) -> dict:
    r = await client.get(f"/api/conversations/{cid}")
    assert r.status_code == 200, r.text
    return r.json()


async def path(client, cid: str, limit: int = 200) -> list[dict]:
    """The whole active path, oldest first, read page by page."""
    out: list[dict] = []
    before = None
    while True:
        params = {"limit": limit}
        if before:
            params["before"] = before
        r = await client.get(f"/api/conversations/{cid}/messages", params=params)
        assert r.status_code == 200, r.text
        page = r.json()
        out[:0] = page["items"]
        before = page["next_cursor"]
        if not before:
            return out


def texts(items: list[dict]) -> list[str]:
    return [m["text"] for m in items]


async def rows(app, table, *where) -> list:
    async with app.state.runtime.db.read() as c:
        return list((await c.execute(select(table).where(*where))).all())


async def count(app, table, *where) -> int:
    async with app.state.runtime.db.read() as c:
        return (await c.execute(select(func.count()).select_from(table).where(*where))).scalar_one()


#: Written by the background worker on its own schedule (the follow-up jobs of earlier appends
#: run whenever their debounce window ends), so their counts say nothing about one request.
# rows the process writes on its own clock (job queue, worker heartbeats, deployment-wide
# duty leases such as event pruning, the lease of a compaction job still running from an earlier
# turn), not because of the request under test
BACKGROUND_TABLES = {"jobs", "workers", "service_leases", "conversation_compaction_leases"}


async def table_counts(app) -> dict[str, int]:
    """Row counts of every table a request writes: compared before/after a rejected request
    (nothing written)."""
    out = {}
    for tbl in t.metadata.sorted_tables:
        if tbl.name not in BACKGROUND_TABLES:
            out[tbl.name] = await count(app, tbl)
    return out


async def tick() -> None:
    """Let the millisecond clock move so ``updated_at`` values differ (ordering tests)."""
    await asyncio.sleep(0.003)

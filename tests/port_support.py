"""Helpers for the portability tests: an app with its own transfer folder, uploads, job runs
and reading an imported tree back from the database (real SQLite / PostgreSQL, no mocks)."""

from __future__ import annotations

import io
import json
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from sqlalchemy import select

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.jobs.worker import Worker
from tests.conftest import make_settings

DATA = Path(__file__).parent / "data" / "imports"


@asynccontextmanager
async def port_app(db_url: str, tmp_path: Path, **kw):
    kw.setdefault("run_worker", False)
    application = create_app(make_settings(db_url, transfer_dir=str(tmp_path / "transfers"), **kw))
    async with application.router.lifespan_context(application):
        yield application


@asynccontextmanager
async def client_for(application, *, admin: bool = False, email: str | None = None):
    rt = application.state.runtime
    email = email or f"u-{uuid.uuid4().hex[:8]}@example.com"
    user, key = await auth_service.create_user(rt.db, email, admin=admin)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://test",
        headers={"Authorization": f"Bearer {key}"},
    ) as c:
        c.user_id = user["id"]
        c.email = email
        yield c


async def upload(client, data: bytes | str | Path, name: str = "conversations.json", **form):
    if isinstance(data, Path):
        data = data.read_bytes()
    if isinstance(data, str):
        data = data.encode()
    fields = {k: str(v).lower() if isinstance(v, bool) else v for k, v in form.items()}
    return await client.post(
        "/api/imports", files={"file": (name, io.BytesIO(data), "application/json")}, data=fields
    )


async def run_jobs(application, kinds=("import.run",)) -> int:
    w = Worker(application.state.runtime, kinds=list(kinds) if kinds else None)
    n = 0
    while await w.run_once():
        n += 1
    return n


async def import_file(application, client, data, **form) -> dict:
    r = await upload(client, data, **form)
    assert r.status_code == 202, r.text
    await run_jobs(application)
    r = await client.get(f"/api/imports/{r.json()['id']}")
    assert r.status_code == 200, r.text
    return r.json()


async def conversations(application, user_id: str) -> list:
    async with application.state.runtime.db.read() as c:
        q = select(t.conversations).where(t.conversations.c.user_id == user_id)
        return list((await c.execute(q.order_by(t.conversations.c.created_at))).all())


async def messages(application, cid: str) -> list:
    async with application.state.runtime.db.read() as c:
        q = select(t.messages).where(t.messages.c.conversation_id == cid)
        return list((await c.execute(q.order_by(t.messages.c.created_at, t.messages.c.id))).all())


def source_id(row) -> str:
    return row.metadata["import"]["id"]


def tree_of(rows) -> dict:
    """source id → (parent source id, role, depth) — the imported shape in source terms."""
    by_id = {r.id: r for r in rows}
    return {
        source_id(r): (
            source_id(by_id[r.parent_id]) if r.parent_id else None,
            r.role,
            r.depth,
        )
        for r in rows
    }


def load(name: str):
    return json.loads((DATA / name).read_text())

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
from chatmem.portability import importer
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


async def local_import(application, user_id: str, path: Path) -> dict:
    """An import of a file on this machine, not queued (the caller runs ``run_import``)."""
    rt = application.state.runtime
    return await importer.create_import(
        rt.db, rt.settings, user_id, None, filename=path.name, local_path=str(path), queue=False
    )


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


WORDS = (
    "the plan for tomorrow includes a walk by the river then coffee and a long talk about "
    "books music travel code gardens weather recipes budgets and the next trip to Kyoto"
).split()


def write_chatgpt_export(path: Path, conversations: int, per_conversation: int) -> int:
    """A synthetic ChatGPT ``conversations.json`` written as a stream (never whole in memory):
    ``conversations`` conversations of ``per_conversation`` visible messages each, alternating
    user/assistant, with a regenerated answer every tenth turn (a sibling branch) and the hidden
    root/system nodes real exports have. Returns the number of visible messages."""
    total = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for ci in range(conversations):
            t0 = 1_600_000_000 + ci * 3600
            mapping = {
                "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]},
                "sys": {
                    "id": "sys",
                    "parent": "root",
                    "children": [],
                    "message": {
                        "author": {"role": "system"},
                        "content": {"content_type": "text", "parts": [""]},
                        "metadata": {"is_visually_hidden_from_conversation": True},
                    },
                },
            }
            parent, made, turn = "sys", 0, 0
            while made < per_conversation:
                role = "user" if turn % 2 == 0 else "assistant"
                turn += 1
                nid = f"{ci}-{made}"
                words = " ".join(WORDS[(made * 7 + i) % len(WORDS)] for i in range(40))
                mapping[nid] = {
                    "id": nid,
                    "parent": parent,
                    "children": [],
                    "message": {
                        "id": nid,
                        "author": {"role": role},
                        "create_time": t0 + made * 10,
                        "content": {"content_type": "text", "parts": [f"{made}: {words}"]},
                        "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                        "recipient": "all",
                    },
                }
                mapping[parent]["children"].append(nid)
                made += 1
                if role == "assistant" and turn % 10 == 0 and made < per_conversation:
                    alt = f"{nid}-regen"
                    mapping[alt] = {**mapping[nid], "id": alt, "children": []}
                    mapping[parent]["children"].append(alt)
                    made += 1
                parent = nid
            doc = {
                "id": f"conv-{ci}",
                "title": f"Synthetic {ci}",
                "create_time": t0,
                "update_time": t0 + made * 10,
                "current_node": parent,
                "mapping": mapping,
            }
            f.write(("," if ci else "") + json.dumps(doc))
            total += made
        f.write("]")
    return total

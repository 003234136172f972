"""Helpers shared by the context, compaction and inline-thread tests: build conversations fast.

Messages are written straight through ``conversations.store`` in one transaction (no HTTP, no
model), so tests can make long conversations and branches cheaply on both databases.
"""

from __future__ import annotations

from sqlalchemy import select, update

from chatmem.auth import service as auth_service
from chatmem.auth.models import Principal
from chatmem.conversations import store
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.providers.base import ModelInfo


def demo_model(
    window: int = 8192, max_output: int = 256, encoding: str = "cl100k_base"
) -> ModelInfo:
    return ModelInfo(
        id="demo", provider="demo", context_window=window, max_output=max_output, encoding=encoding
    )


async def make_user(db: Database, email: str) -> Principal:
    user, _key = await auth_service.create_user(db, email)
    return Principal(id=user["id"], email=email)


async def make_conv(db: Database, user_id: str, **values) -> str:
    async with db.write() as c:
        return await store.insert_conversation(c, user_id, **values)


async def append_chain(
    db: Database,
    user_id: str,
    cid: str,
    texts: list[tuple[str, str]],
    *,
    parent: str | type | None = ...,
    status_last: str | None = None,
) -> list[str]:
    """Append ``(role, text)`` messages as a chain under ``parent`` (default: the active leaf)."""
    ids: list[str] = []
    async with db.write() as c:
        conv = await store.get_conversation(c, user_id, cid)
        cur = conv.active_leaf_id if parent is ... else parent
        for i, (role, text) in enumerate(texts):
            status = status_last if (status_last and i == len(texts) - 1) else "complete"
            row = await store.insert_message(
                c,
                conv,
                parent_id=cur,
                role=role,
                blocks=[{"kind": "text", "text": text}],
                user_id=user_id,
                status=status,
            )
            cur = row.id
            ids.append(row.id)
    return ids


def rounds(n: int, start: int = 0, words: int = 8) -> list[tuple[str, str]]:
    out = []
    for i in range(start, start + n):
        out.append(("user", f"Question {i}: " + " ".join(f"word{i}x{j}" for j in range(words))))
        out.append(("assistant", f"Answer {i}: " + " ".join(f"reply{i}y{j}" for j in range(words))))
    return out


async def conv_row(db: Database, user_id: str, cid: str):
    async with db.read() as c:
        return await store.get_conversation(c, user_id, cid)


async def set_leaf(db: Database, cid: str, leaf: str) -> None:
    async with db.write() as c:
        await c.execute(
            update(t.conversations).where(t.conversations.c.id == cid).values(active_leaf_id=leaf)
        )


async def job_rows(db: Database, kind: str | None = None) -> list[dict]:
    q = select(t.jobs)
    if kind:
        q = q.where(t.jobs.c.kind == kind)
    async with db.read() as c:
        return [dict(r._mapping) for r in (await c.execute(q.order_by(t.jobs.c.created_at))).all()]

"""Helpers for the /rpc tests (no tests here): direct row inserts and envelope validation.

Every /rpc response a test looks at goes through ``data_of`` / ``error_of``, which validate the
whole envelope against the Pydantic models written from the seed's zod contracts.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from sqlalchemy import insert, select, update

from chatmem.compat.contracts import Failure, Success
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id

from .social_support import count_rows  # noqa: F401 - re-exported for the compat tests

T = TypeVar("T", bound=BaseModel)


def data_of(resp, model: type[T], status: int = 200) -> T:
    """Assert a success envelope with ``status`` and return its data as ``model``."""
    assert resp.status_code == status, resp.text
    env = Success[model].model_validate(resp.json())
    assert env.meta.requestId and resp.headers["x-request-id"] == env.meta.requestId
    return env.data


def error_of(resp, status: int, message: str | None = None) -> Failure:
    """Assert a failure envelope with ``status`` (and ``message``) and return it."""
    assert resp.status_code == status, resp.text
    env = Failure.model_validate(resp.json())
    if message is not None:
        assert env.error.message == message, env.error
    return env


def db_of(app):
    return app.state.runtime.db


async def insert_agent(app, user_id: str, **kw) -> str:
    now = now_ms()
    aid = kw.pop("id", None) or new_id("agt")
    values = dict(
        id=aid,
        user_id=user_id,
        name="Lin",
        handle="lin",
        headline="a friend",
        opening_message="你好，我是 Lin。",
        created_at=now,
        updated_at=now,
    )
    values.update(kw)
    async with db_of(app).write() as c:
        await c.execute(insert(t.agents).values(**values))
    return aid


async def insert_messages(app, conv_id: str, rows: list[dict]) -> list[str]:
    """Insert messages as a parent chain (oldest first) with the given fields, and keep the
    conversation's counters right. Each row: role, text, created_at, and optionally id, status
    (a ``streaming`` row gets a live generation lease, so the sweeper leaves it alone)."""
    db = db_of(app)
    async with db.write() as c:
        conv = (
            await c.execute(select(t.conversations).where(t.conversations.c.id == conv_id))
        ).one()
        parent = conv.active_leaf_id
        depth = 0
        if parent:
            depth = (
                await c.execute(select(t.messages.c.depth).where(t.messages.c.id == parent))
            ).scalar_one() + 1
        values, ids, leases = [], [], []
        for r in rows:
            mid = r.get("id") or new_id("msg")
            blocks = [{"kind": "text", "text": r["text"]}]
            values.append(
                dict(
                    id=mid,
                    conversation_id=conv_id,
                    parent_id=parent,
                    role=r["role"],
                    blocks=blocks,
                    search_text=r["text"],
                    status=r.get("status", "complete"),
                    created_at=r["created_at"],
                    user_id=conv.user_id,
                    agent_id=conv.agent_id,
                    depth=depth,
                )
            )
            ids.append(mid)
            if values[-1]["status"] == "streaming":  # a turn in flight holds a live lease
                leases.append(
                    dict(
                        conversation_id=conv_id,
                        branch_key=parent or "root",
                        principal_id=conv.user_id,
                        owner_token=f"{mid}:test",
                        expires_at=now_ms() + 3_600_000,
                    )
                )
            parent, depth = mid, depth + 1
        if values:
            await c.execute(insert(t.messages), values)
            if leases:
                await c.execute(insert(t.conversation_generation_leases), leases)
            await c.execute(
                update(t.conversations)
                .where(t.conversations.c.id == conv_id)
                .values(
                    message_count=t.conversations.c.message_count + len(values),
                    last_message_at=max(v["created_at"] for v in values),
                    active_leaf_id=parent,
                )
            )
    return ids

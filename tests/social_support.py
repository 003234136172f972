"""Helpers for the sharing, feedback and search tests (no tests here): direct row inserts and
row counts, so tests can set columns the API never exposes (cost, raw, provider, status …)."""

from __future__ import annotations

from sqlalchemy import func, insert, select, update

from chatmem.conversations import blocks as blk
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id


def db_of(app):
    return app.state.runtime.db


async def new_conv(user, title: str = "Chat") -> str:
    r = await user.client.post("/api/conversations", json={"title": title})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def insert_chain(
    app, conv_id: str, rows: list[dict], *, parent: str | None = "leaf", move_leaf: bool = True
) -> list[str]:
    """Insert messages as a chain under ``parent`` ("leaf" = the active leaf). Each row: role,
    text or blocks, and any other message column. Streaming rows get a live generation lease so
    the sweeper leaves them streaming."""
    async with db_of(app).write() as c:
        conv = (
            await c.execute(select(t.conversations).where(t.conversations.c.id == conv_id))
        ).one()
        if parent == "leaf":
            parent = conv.active_leaf_id
        depth = 0
        if parent:
            depth = (
                await c.execute(select(t.messages.c.depth).where(t.messages.c.id == parent))
            ).scalar_one() + 1
        ids = []
        base = now_ms()
        for i, r in enumerate(rows):
            r = dict(r)
            blocks = r.pop("blocks", None) or [{"kind": "text", "text": r.pop("text", "")}]
            r.pop("text", None)
            mid = r.pop("id", None) or new_id("msg")
            values = dict(
                id=mid,
                conversation_id=conv_id,
                parent_id=parent,
                blocks=blocks,
                search_text=blk.visible_text(blocks),
                status="complete",
                created_at=base + i,
                user_id=conv.user_id,
                depth=depth,
            )
            values.update(r)
            await c.execute(insert(t.messages).values(**values))
            if values["status"] == "streaming":  # a live lease keeps the sweeper off the turn
                await c.execute(
                    insert(t.conversation_generation_leases).values(
                        conversation_id=conv_id,
                        branch_key=mid,
                        principal_id=conv.user_id,
                        owner_token=f"{mid}:test",
                        expires_at=base + 86_400_000,
                    )
                )
            ids.append(mid)
            parent, depth = mid, depth + 1
        if move_leaf and ids:
            await c.execute(
                update(t.conversations)
                .where(t.conversations.c.id == conv_id)
                .values(
                    active_leaf_id=ids[-1], message_count=t.conversations.c.message_count + len(ids)
                )
            )
    return ids


async def count_rows(app, table, **where) -> int:
    q = select(func.count()).select_from(table)
    for k, v in where.items():
        q = q.where(table.c[k] == v)
    async with db_of(app).read() as c:
        return (await c.execute(q)).scalar_one()


async def set_columns(app, table, row_id: str, **values) -> None:
    async with db_of(app).write() as c:
        await c.execute(update(table).where(table.c.id == row_id).values(**values))


def assert_error(resp, status: int, code: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error", "request_id"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["request_id"] == resp.headers["x-request-id"], body  # observability/middleware.py
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]

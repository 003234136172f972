"""Share use-cases: create/replace, read, revoke (owner), public read and clone.

Each is one transaction. The conversation row is locked (PostgreSQL) while a share is replaced,
so two concurrent re-shares serialise instead of tripping the one-share-per-conversation index.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..auth.models import Principal
from ..contracts.base import Output, when_present
from ..conversations import store as conv_store
from ..conversations import tree_store
from ..conversations.wire import Block, conversation_out
from ..db.engine import Database
from ..errors import NotFound
from . import redact, store

#: Longest active path a share freezes (the whole path in practice).
MAX_PATH = 1_000_000


class ShareOut(Output):
    token: str = Field(description="192-bit random hex; whoever has it can read the snapshot")
    conversation_id: str
    title: str
    created_at: int
    message_count: int
    url: str


class PublicMessage(Output):
    """What a share shows of a message (redact.py's whitelist)."""

    role: str
    blocks: list[Block]
    citations: list[Any]
    attachments: list[Any]
    created_at: int
    author_name: str
    fast: bool
    model_label: str | None = when_present("assistant messages, not in fast mode")


class PublicShare(Output):
    title: str
    messages: list[PublicMessage]
    created_at: int


def share_out(row) -> dict:
    return {
        "token": row.id,
        "conversation_id": row.conversation_id,
        "title": row.title,
        "created_at": row.created_at,
        "message_count": len(row.snapshot or []),
        "url": f"/api/public/shared/{row.id}",
    }


def public_out(row) -> dict:
    return {
        "title": row.title,
        "messages": redact.public_messages(row.snapshot),
        "created_at": row.created_at,
    }


async def share(db: Database, p: Principal, cid: str) -> dict:
    """Freeze the active path now; any previous share of this conversation stops working."""
    async with db.write() as c:
        conv = await conv_store.get_conversation(c, p.id, cid, for_update=True)
        rows = await tree_store.path_rows(c, cid, conv.active_leaf_id, MAX_PATH)
        maps = [r._mapping for r in rows]
        names = await store.user_names(c, {m["author_id"] or m["user_id"] for m in maps})
        row = await store.replace(c, conv, p.id, redact.freeze(maps, names))
    return share_out(row)


async def get_share(db: Database, p: Principal, cid: str) -> dict:
    async with db.read() as c:
        await conv_store.get_conversation(c, p.id, cid)
        row = await store.share_of(c, cid)
    if row is None:
        raise NotFound("conversation is not shared", code="not_shared")
    return share_out(row)


async def revoke(db: Database, p: Principal, cid: str) -> None:
    async with db.write() as c:
        await conv_store.get_conversation(c, p.id, cid)
        if not await store.revoke(c, cid):
            raise NotFound("conversation is not shared", code="not_shared")


async def read_public(db: Database, token: str) -> dict:
    async with db.read() as c:
        return public_out(await store.by_token(c, token))


async def clone(db: Database, p: Principal, token: str) -> dict:
    """Copy a shared snapshot into a new conversation of the caller (a chain, leaf at the end)."""
    async with db.write() as c:
        share_row = await store.by_token(c, token)
        messages = redact.public_messages(share_row.snapshot)
        cid = await conv_store.insert_conversation(c, p.id, title=share_row.title or "新对话")
        await store.insert_chain(c, cid, p.id, messages)
        conv = await conv_store.get_conversation(c, p.id, cid)
    return conversation_out(conv)

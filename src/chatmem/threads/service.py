"""Inline threads (seed 001, docs/specs.md): a side conversation about a quoted span of a message.

A thread is an ordinary conversation whose ``inline_source_conv`` / ``inline_parent_id`` /
``inline_quote`` point at the source conversation, the anchor message and the selected text
(≤ 4,000 characters; the title is its first 40). Its context is the quote plus the anchor message
(capped at 8,000 characters) — never the source's history (see context/service.py). Threads are
hidden from the conversation list (``list_query`` filters ``inline_source_conv``) and from search,
listed under their source here, and deleted with it (conversations/service.py).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from ..auth.models import Principal
from ..contracts.base import Input
from ..conversations import store
from ..conversations.wire import conversation_out
from ..db.engine import Database
from . import store as thread_store

QUOTE_MAX_CHARS = 4000
TITLE_CHARS = 40


class InlineThreadIn(Input):
    message_id: str = Field(min_length=1, max_length=64)
    quote: str = Field(min_length=1, max_length=QUOTE_MAX_CHARS)

    @field_validator("quote")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("quote must not be blank")
        return v


def title_for(quote: str) -> str:
    flat = " ".join(quote.split())
    return flat[:TITLE_CHARS] or "Inline thread"


async def create_thread(db: Database, p: Principal, cid: str, body: InlineThreadIn) -> dict:
    async with db.write() as c:
        src = await store.get_conversation(c, p.id, cid)
        anchor = await store.get_message(c, cid, body.message_id)
        tid = await store.insert_conversation(
            c,
            p.id,
            title=title_for(body.quote),
            project_id=src.project_id,
            agent_id=src.agent_id,
            model_id=src.model_id,
            provider=src.provider,
            workspace_id=src.workspace_id,
            inline_source_conv=src.id,
            inline_parent_id=anchor.id,
            inline_quote=body.quote,
        )
        row = await store.get_conversation(c, p.id, tid)
    return conversation_out(row)


async def list_threads(db: Database, p: Principal, cid: str, *, message_id: str | None) -> dict:
    async with db.read() as c:
        await store.get_conversation(c, p.id, cid)
        rows = await thread_store.inline_threads(c, p.id, cid, message_id=message_id)
    return {"items": [conversation_out(r) for r in rows], "next_cursor": None}

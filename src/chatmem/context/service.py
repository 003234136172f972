"""Gather what a turn's context needs from the database and call the pure assembler.

``build_turn_context`` is the one entry point the generation service uses. It reads (never writes)
inside the caller's connection and returns provider messages plus the context report that is saved
in the assistant message's metadata.

This first version sends the active path (newest messages first until a fixed cap); the context
issue replaces its body with ``assemble()`` over budgets, summaries, memories and inline quotes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import blocks as blk
from ..conversations import store
from ..providers.base import ChatMessage, ModelInfo

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."


@dataclass
class TurnContext:
    messages: list[ChatMessage]
    report: dict = field(default_factory=dict)


async def build_turn_context(c: AsyncConnection, *, settings, conv, parent_id: str | None,
                             model: ModelInfo, principal) -> TurnContext:
    ids = await store.path_ids(c, conv.id, parent_id, 200)
    rows = await store.rows_by_ids(c, ids)
    msgs = [ChatMessage("system", DEFAULT_SYSTEM_PROMPT)]
    included = []
    for r in rows:
        text = blk.visible_text(r.blocks)
        if r.role in ("user", "assistant") and text and r.status != "streaming":
            msgs.append(ChatMessage(r.role, text))
            included.append(r.id)
    report = {"sections": [{"name": "history", "message_ids": included}],
              "message_ids": included, "memory_ids": [], "total_tokens": 0}
    return TurnContext(msgs, report)

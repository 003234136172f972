"""``POST /rpc/chat/inbox``: a seed-000 (docs/specs.md) chat turn run by chatmem's own generation service.

The request names the agent in ``conversation.id``; it is looked up as the caller's own (the rest of
the persona object is client-built display data and is not trusted — the stored agent is the
truth). ``conversationId``, when sent, must be one of the caller's conversations with that agent;
otherwise the default conversation is got or created (race-free). The server's history is
authoritative: only the final message of ``messages`` (a user message) is the new turn, earlier UI messages
(including the client-side opening greeting) are ignored.

The turn goes through ``generation.service.start_turn`` exactly like a native send: user message and
assistant placeholder in one transaction (counters updated relatively), the generation lease,
detached execution, a durable event log, resumable through the native
``GET /api/conversations/{id}/messages/{mid}/stream`` (the ids are in the response headers), the
sweeper after a crash. A failed turn leaves its assistant row with status ``error`` (listed as
``failed``). The reply streams as plain text; when the turn fails before its first character the
answer is seed 000's 500 "Chat stream failed" envelope instead.

The agent's last-assistant-message preview is written by the generation service in the same
transaction that completes the turn (so a closed tab or a crash cannot lose it).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass

from ..auth.models import Principal
from ..conversations.service import check_size
from ..errors import ApiError, BadRequest
from ..generation import service as generation
from . import service, store
from .contracts import InboxChatRequest

log = logging.getLogger("chatmem.compat")

TERMINAL = ("done", "error")
STREAM_FAILED = "Chat stream failed"


class ChatStreamFailed(ApiError):
    status, code = 500, "chat_stream_failed"


@dataclass
class ChatTurn:
    agent_id: str
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    first: list[dict]  # events already read from the log (up to the first text or the end)
    events: AsyncGenerator[dict, None]  # the rest of the log

    @property
    def headers(self) -> dict[str, str]:
        return {
            "x-conversation-id": self.conversation_id,
            "x-user-message-id": self.user_message_id,
            "x-assistant-message-id": self.assistant_message_id,
        }


def new_turn_text(body: InboxChatRequest) -> str:
    """The new turn: the final UI message, which must be the user's and carry text (a list ending
    with an assistant message would re-ask an old question)."""
    last = body.messages[-1]
    if last.role != "user" or not last.text.strip():
        raise BadRequest(
            "The last message must be a user message with text",
            code="validation_error",
            details=[
                {
                    "path": ["messages", len(body.messages) - 1],
                    "message": "a user message with text is required",
                    "type": "missing_user_message",
                }
            ],
        )
    return last.text


async def _conversation(rt, p: Principal, agent_id: str, conversation_id: str | None):
    if conversation_id is None:
        _agent, conv = await service.get_or_create_default(rt.db, p, agent_id)
        return conv
    async with rt.db.read() as c:
        await store.owned_agent(c, p.id, agent_id)
        return await store.agent_conversation(c, p.id, agent_id, conversation_id)


async def start(rt, p: Principal, body: InboxChatRequest) -> ChatTurn:
    """Validate, start the turn, and read its log up to the first text (or its end)."""
    agent_id = body.conversation.id
    if agent_id is None:
        raise BadRequest(
            "conversation.id (the agent id) is required",
            code="validation_error",
            details=[{"path": ["conversation", "id"], "message": "Required", "type": "missing"}],
        )
    text = new_turn_text(body)
    blocks = [{"kind": "text", "text": text}]
    check_size(blocks, rt.settings.max_message_bytes)
    conv = await _conversation(rt, p, agent_id, body.conversationId)
    last = body.messages[-1]
    meta = {"source": "rpc.inbox", **({"client_message_id": last.id} if last.id else {})}
    ids = await generation.start_turn(rt, p, conv.id, blocks, metadata=meta)
    events = generation.follow(rt, ids.assistant_message_id)
    first: list[dict] = []
    async for e in events:
        first.append(e)
        if (e["type"] == "text_delta" and e["data"].get("text")) or e["type"] in TERMINAL:
            break
    if first and first[-1]["type"] == "error":
        await events.aclose()
        raise ChatStreamFailed(
            STREAM_FAILED,
            details={
                "conversationId": conv.id,
                "messageId": ids.assistant_message_id,
                "reason": first[-1]["data"].get("code"),
            },
        )
    return ChatTurn(agent_id, conv.id, ids.user_message_id, ids.assistant_message_id, first, events)


async def resume(rt, p: Principal, chat_id: str) -> ChatTurn | None:
    """The AI SDK's resume (``GET /rpc/chat/inbox/{chatId}/stream``): the reply still being
    generated in that chat, from its first character (a text stream has no offsets), or None
    (answered 204) when nothing runs. ``chatId`` is the agent id or the conversation id."""
    async with rt.db.read() as c:
        conv = await store.chat_conversation(c, p.id, chat_id)
        mid = await store.running_reply(c, conv.id) if conv is not None else None
    if mid is None:
        return None
    ids = await generation.check_message(rt, p, conv.id, mid)
    events = generation.follow(rt, mid)
    return ChatTurn(conv.agent_id, conv.id, ids.parent_id or "", mid, [], events)


async def reply_text(turn: ChatTurn) -> AsyncIterator[bytes]:
    """The reply as UTF-8 text chunks; a failure mid-stream just ends the text (the row says
    ``failed``). Closing the response does not stop the turn."""
    try:
        for e in turn.first:
            if e["type"] == "text_delta" and e["data"].get("text"):
                yield e["data"]["text"].encode()
        if turn.first and turn.first[-1]["type"] in TERMINAL:
            return
        async for e in turn.events:
            if e["type"] == "text_delta" and e["data"].get("text"):
                yield e["data"]["text"].encode()
            elif e["type"] in TERMINAL:
                return
    finally:
        await turn.events.aclose()

"""Use-cases of the OpenAI-compatible door: find or create the conversation a request
continues, start its turn on the native generation path, and read the turn's events.

Which conversation (in this order):

1. ``X-Chatmem-Conversation: <id>`` or ``metadata.chatmem_conversation`` — one of the caller's
   conversations (else 404). The stored history is the truth: only the new input is added, under
   the active leaf.
2. The resent history: the request's messages before its last assistant message hash to a user
   message stored through /v1 earlier (transcript.py) → continue under that message's answer
   (the one whose text the client resent, else the newest). Nothing is duplicated.
3. Otherwise a new conversation. History the client sent (a chat begun elsewhere) is stored
   first as finished messages, so context assembly, memory and search see it.

The new input becomes one user message, and the turn is started by ``generation.start_turn``
exactly like a native send — durable, resumable, counted and billed, with memories and recall
assembled into the prompt and memory extraction after it. The client's system prompt goes first
in the system message; ``stop`` and the passthrough parameters go to the turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..auth.models import Principal
from ..conversations import followups
from ..conversations import service as conversations
from ..conversations import store as conv_store
from ..conversations.service import check_size
from ..errors import ApiError, Unprocessable
from ..generation import service as generation
from ..generation.turns import TurnRequest
from . import store, transcript
from .wire import ChatCompletionRequest

CONVERSATION_HEADER = "x-chatmem-conversation"
METADATA_KEY = "chatmem_conversation"


@dataclass(frozen=True)
class V1Turn:
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    model: str


def _blocks(m: dict) -> list[dict]:
    text = transcript.text_of(m.get("content"))
    if m.get("role") == "tool":
        text = transcript.render_input([m])
    blocks = [{"kind": "text", "text": text}] if text or not m.get("tool_calls") else []
    for call in m.get("tool_calls") or ():
        fn = call.get("function") or {}
        blocks.append(
            {
                "kind": "tool_call",
                "id": call.get("id") or "",
                "name": fn.get("name") or "",
                "arguments": fn.get("arguments") or "",
            }
        )
    return blocks


async def _import(c, p: Principal, conv, messages: list[dict], upto: int) -> str | None:
    """Store the request's history (indices < ``upto``) as finished messages; returns the last
    one's id. Each user message records its prefix so the next request continues here."""
    parent = None
    for i, m in enumerate(messages[:upto]):
        if m.get("role") in transcript.SYSTEM_ROLES:
            continue
        role = "assistant" if m.get("role") == "assistant" else "user"
        row = await conv_store.insert_message(
            c,
            conv,
            parent_id=parent,
            role=role,
            blocks=_blocks(m),
            user_id=p.id,
            metadata={"source": "v1.history"},
        )
        conv = await conv_store.get_conversation(c, p.id, conv.id)
        parent = row.id
        if role == "user":
            await store.record(c, p.id, transcript.prefix_hash(messages[: i + 1]), conv.id, row.id)
    if parent is not None:
        await followups.after_append(c, conversation_id=conv.id, user_id=p.id, message_id=parent)
    return parent


async def _target(rt, p: Principal, body: ChatCompletionRequest, messages, sp, explicit):
    """(conversation id, parent message id or None for the active leaf, whether it is new)."""
    async with rt.db.write() as c:
        if explicit:
            conv = await conv_store.get_conversation(c, p.id, explicit)
            return conv.id, None, False
        if sp.prefix_end >= 0:
            hit = await store.find(c, p.id, transcript.prefix_hash(messages[: sp.prefix_end]))
            if hit is not None:
                reply = transcript.text_of(messages[sp.prefix_end].get("content"))
                parent = await store.answer_under(c, hit.conversation_id, hit.message_id, reply)
                return hit.conversation_id, parent or hit.message_id, False
        cid = await conv_store.insert_conversation(c, p.id, model_id=body.model)
        conv = await conv_store.get_conversation(c, p.id, cid)
        parent = await _import(c, p, conv, messages, sp.prefix_end + 1)
        return cid, parent, True


async def start(rt, p: Principal, body: ChatCompletionRequest, header: str | None) -> V1Turn:
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    sp = transcript.split(messages)
    if not sp.new_text.strip():
        raise Unprocessable(
            "the messages must end with a user message (or tool results) with text",
            code="no_new_message",
        )
    blocks = [{"kind": "text", "text": sp.new_text}]
    check_size(blocks, rt.settings.max_message_bytes)
    info = rt.providers.resolve(body.model)  # an unknown model: 422 before any write
    explicit = (header or "").strip() or (body.metadata or {}).get(METADATA_KEY)
    cid, parent, created = await _target(rt, p, body, messages, sp, explicit)
    max_tokens = body.max_completion_tokens or body.max_tokens
    options = body.passthrough()
    round_trip = transcript.tool_round_trip(messages, sp.prefix_end)
    if round_trip:
        options["tool_messages"] = round_trip
    request = TurnRequest(
        system=sp.system, stop=tuple(body.stop or ()), options=options, max_tokens=max_tokens
    )
    try:
        ids = await generation.start_turn(
            rt,
            p,
            cid,
            blocks,
            parent_id=parent,
            model=body.model,
            metadata={"source": "v1"},
            request=request,
        )
    except ApiError:
        if created:  # e.g. 429: a refused request leaves nothing behind
            await conversations.delete_conversation(rt.db, p, cid)
        raise
    async with rt.db.write() as c:
        await store.record(c, p.id, transcript.prefix_hash(messages), cid, ids.user_message_id)
    return V1Turn(cid, ids.user_message_id, ids.assistant_message_id, info.id)


def models(rt) -> dict:
    listed = rt.providers.public_models(is_admin=False)["items"]
    return {
        "object": "list",
        "data": [
            {"id": m["id"], "object": "model", "created": 0, "owned_by": m["provider"] or "chatmem"}
            for m in listed
        ],
    }

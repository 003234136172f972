"""Seed-000 (docs/specs.md) use-cases over chatmem's tables: the default conversation, history pages and feedback.

Each function is one use-case scoped to the calling Principal and returns a contract model.
Status names map ``complete → completed`` and ``error → failed``; ``streaming`` rows are not listed.
Ratings map ``positive ↔ like`` and ``negative ↔ dislike`` and are written by the feedback store (one
writer of ``message_feedback`` and its ``messages.feedback`` mirror), so the native API and admin
views see the same rows. A seed reason is stored as the one-element ``reasons`` list and ``note`` as
``comment``; reading back, the first reason in the seed's enum is shown (a native-only reason reads
as ``other``).
"""

from __future__ import annotations

from typing import Any, Literal

from ..auth.models import Principal
from ..conversations import blocks as blk
from ..conversations import forks
from ..conversations import store as conv_store
from ..db.engine import Database
from ..errors import BadRequest, NotFound
from ..feedback import store as feedback_store
from . import cursor as cur
from . import store
from .contracts import (
    FEEDBACK_REASONS,
    AgentConversationMessage,
    AgentConversationMessagesPage,
    AgentConversationResponse,
    MessageFeedback,
    MessageFeedbackRequest,
    MessageFeedbackResponse,
)

STATUS_OUT: dict[str, Literal["completed", "failed"]] = {"complete": "completed", "error": "failed"}
RATING_IN: dict[str, str] = {"positive": "like", "negative": "dislike"}
RATING_OUT: dict[str, Literal["positive", "negative"]] = {"like": "positive", "dislike": "negative"}


def feedback_out(row) -> MessageFeedback | None:
    if row is None:
        return None
    reasons = row.reasons or []
    reason: Any = next((r for r in reasons if r in FEEDBACK_REASONS), "other" if reasons else None)
    return MessageFeedback(
        rating=RATING_OUT[row.rating],
        reason=reason,
        note=row.comment or None,
        updatedAtMs=row.updated_at,
    )


def message_out(row, agent_id: str, feedback=None) -> AgentConversationMessage:
    return AgentConversationMessage(
        id=row.id,
        conversationId=row.conversation_id,
        agentId=agent_id,
        role=row.role,
        content=blk.visible_text(row.blocks),
        status=STATUS_OUT[row.status],
        createdAtMs=row.created_at,
        feedback=feedback_out(feedback),
    )


def parse_cursor(raw: str | None) -> cur.Cursor | None:
    if raw is None:
        return None
    try:
        return cur.parse(raw)
    except cur.InvalidCursor:
        raise BadRequest("Invalid cursor", code="invalid_cursor") from None


async def _page(c, user_id: str, conv, cursor: cur.Cursor | None):
    if conv.fork_source_id:  # a fork still being copied: /rpc answers again once it is
        raise forks.ForkPending(conv.id)
    if cursor is not None and cursor.id is not None and cursor.depth is None:
        depth = await store.cursor_depth(c, conv.id, cursor.id)
        if depth is None:
            raise BadRequest("Invalid cursor", code="invalid_cursor")
        cursor = cur.Cursor(cursor.ms, cursor.id, depth)
    rows, older = await store.history_page(c, conv.id, cursor)
    fb = await store.feedback_for(c, user_id, [r.id for r in rows if r.role == "assistant"])
    messages = [message_out(r, conv.agent_id, fb.get(r.id)) for r in rows]
    nxt = None
    if older is not None:
        nxt = cur.emit(rows[0].created_at, rows[0].depth, rows[0].id, older.created_at)
    return messages, nxt


async def get_or_create_default(db: Database, p: Principal, agent_id: str):
    """(agent, default conversation); creates the conversation on first use, race-free."""
    async with db.read() as c:
        agent = await store.owned_agent(c, p.id, agent_id)
        conv = await store.default_conversation(c, p.id, agent_id)
    if conv is None:
        async with db.write() as c:
            agent = await store.owned_agent(c, p.id, agent_id)
            conv = await store.ensure_default_conversation(c, p.id, agent)
    return agent, conv


async def conversation(db: Database, p: Principal, agent_id: str) -> AgentConversationResponse:
    """GET /rpc/chat/inbox/{agentId}/conversation: the default conversation and its newest page."""
    agent, conv = await get_or_create_default(db, p, agent_id)
    async with db.read() as c:
        conv = await store.agent_conversation(c, p.id, agent_id, conv.id)
        messages, nxt = await _page(c, p.id, conv, None)
    return AgentConversationResponse(
        conversationId=conv.id,
        agentId=agent.id,
        title=conv.title,
        summary=conv.summary,
        messageCount=conv.message_count,
        openingMessage=agent.opening_message,
        messages=messages,
        nextCursor=nxt,
    )


async def messages(
    db: Database, p: Principal, agent_id: str, cursor: str | None
) -> AgentConversationMessagesPage:
    """GET /rpc/chat/inbox/{agentId}/messages?cursor=: the page strictly older than ``cursor``."""
    parsed = parse_cursor(cursor)
    _agent, conv = await get_or_create_default(db, p, agent_id)
    async with db.read() as c:
        items, nxt = await _page(c, p.id, conv, parsed)
    return AgentConversationMessagesPage(messages=items, nextCursor=nxt)


async def give_feedback(
    db: Database, p: Principal, agent_id: str, message_id: str, body: MessageFeedbackRequest
) -> MessageFeedbackResponse:
    """Upsert the caller's rating of one of their completed assistant messages of this agent."""
    async with db.write() as c:
        await store.owned_agent(c, p.id, agent_id)
        conv, msg = await _feedback_target(c, p.id, agent_id, message_id)
        row = await feedback_store.upsert_rating(
            c,
            p.id,
            conv,
            msg,
            rating=RATING_IN[body.rating],
            reasons=[body.reason] if body.reason else [],
            comment=body.note or "",
        )
    out = feedback_out(row)
    assert out is not None  # an upsert always returns its row
    return MessageFeedbackResponse(messageId=msg.id, feedback=out)


async def _feedback_target(c, user_id: str, agent_id: str, message_id: str):
    """(conversation, message) of a rating, as the native rating takes them: the conversation
    locked (``for_change``: its pending forks copied first, so a rating's ``feedback`` mirror
    lands after their copies, not in them), then the message read under the lock — a round
    deletion that held the lock answers this a 404, not a rating of a row it removed. The
    conversation is found from the message; a message of a pending fork (its id was already
    shown, read from the source) exists once the user's pending forks are copied."""
    try:
        found = await store.feedback_message(c, user_id, agent_id, message_id)
    except NotFound:
        if not await forks.settle_user_in(c, user_id):
            raise
        found = await store.feedback_message(c, user_id, agent_id, message_id)
    conv = await conv_store.get_conversation(c, user_id, found.conversation_id, for_change=True)
    return conv, await store.feedback_message(c, user_id, agent_id, message_id)

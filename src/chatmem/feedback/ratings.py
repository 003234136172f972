"""Message ratings (native API): like / dislike with reasons and a comment, one per (message, user).

Only finished assistant messages of the caller's own conversations can be rated: another user's
conversation or message is reported as not found, a user message is a 422 (it is not model output)
and a streaming answer a 409 (it is not finished yet; retry when it is).
"""

from __future__ import annotations

from ..auth.models import Principal
from ..contracts.cursor import decode_cursor, encode_cursor
from ..conversations import store as conv_store
from ..db.engine import Database
from ..errors import Conflict, Forbidden, Unprocessable
from ..workspaces import store as workspaces_store
from . import store
from .wire import FeedbackIn, rating_out


async def _target(c, p: Principal, cid: str, mid: str, *, rating: bool = False):
    # a rating writes the message's mirror column: a fork still copying it is copied first
    conv = await conv_store.get_conversation(c, p.id, cid, for_change=rating)
    return conv, await conv_store.get_message(c, cid, mid)


async def rate(db: Database, p: Principal, cid: str, mid: str, body: FeedbackIn) -> dict:
    async with db.write() as c:
        conv, msg = await _target(c, p, cid, mid, rating=True)
        if msg.role != "assistant":
            raise Unprocessable(
                "only assistant messages can be rated", code="not_assistant_message"
            )
        if msg.status == "streaming":
            raise Conflict(
                "the answer is still being generated; rate it when it is finished",
                code="message_streaming",
            )
        if body.feedback == "":
            await store.delete_rating(c, p.id, mid)
            row = None
        else:
            dislike = body.feedback == "dislike"
            row = await store.upsert_rating(
                c,
                p.id,
                conv,
                msg,
                rating=body.feedback,
                reasons=body.reasons if dislike else [],
                comment=body.comment if dislike else "",
            )
    return {"message_id": mid, "feedback": rating_out(row)}


async def get(db: Database, p: Principal, cid: str, mid: str) -> dict:
    async with db.read() as c:
        await _target(c, p, cid, mid)
        row = await store.rating_of(c, p.id, mid)
    return {"message_id": mid, "feedback": rating_out(row)}


async def workspace_ratings(
    db: Database, p: Principal, wid: str, cursor: str | None, limit: int
) -> dict:
    """Every rating given in the workspace's conversations, for its owner and admins (404 for a
    non-member, 403 for a plain member)."""
    parsed = decode_cursor(cursor, (int, str)) if cursor else None
    async with db.read() as c:
        ws = await workspaces_store.get_for_member(c, p.id, wid)
        if ws.role not in workspaces_store.MANAGERS:
            raise Forbidden("only a workspace admin sees its ratings", code="workspace_role")
        rows = await store.workspace_ratings(c, wid, parsed, limit)
    page = rows[:limit]
    nxt = encode_cursor(page[-1].updated_at, page[-1].id) if len(rows) > limit else None
    items = [
        {
            **(rating_out(r) or {}),
            "id": r.id,
            "message_id": r.message_id,
            "conversation_id": r.conversation_id,
            "user_id": r.user_id,
            "user_email": r.user_email,
        }
        for r in page
    ]
    return {"items": items, "next_cursor": nxt}

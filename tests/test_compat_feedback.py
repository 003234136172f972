"""/rpc message feedback: rating/reason/note, upsert, ownership, and feedback in the history."""

from __future__ import annotations

from sqlalchemy import select

from chatmem.compat.contracts import AgentConversationResponse, MessageFeedbackResponse
from chatmem.db import schema as t

from .test_compat_support import count_rows, data_of, db_of, error_of, insert_agent, insert_messages

BASE = 1_700_000_000_000


async def _setup(app, user):
    aid = await insert_agent(app, user.id)
    conv = data_of(
        await user.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    ids = await insert_messages(
        app,
        conv.conversationId,
        [
            {"role": "user", "text": "hi", "created_at": BASE},
            {"role": "assistant", "text": "hello", "created_at": BASE + 1},
            {"role": "user", "text": "again", "created_at": BASE + 2},
            {"role": "assistant", "text": "oops", "created_at": BASE + 3, "status": "error"},
            {"role": "user", "text": "more", "created_at": BASE + 4},
            {"role": "assistant", "text": "typing", "created_at": BASE + 5, "status": "streaming"},
        ],
    )
    return aid, conv.conversationId, ids


def _url(aid, mid):
    return f"/rpc/chat/inbox/{aid}/messages/{mid}/feedback"


async def test_feedback_upsert_and_history(app, new_user):
    a = await new_user()
    aid, cid, ids = await _setup(app, a)
    r = await a.client.post(_url(aid, ids[1]), json={"rating": "positive", "reason": "warm"})
    out = data_of(r, MessageFeedbackResponse)
    assert out.messageId == ids[1]
    assert (out.feedback.rating, out.feedback.reason, out.feedback.note) == (
        "positive",
        "warm",
        None,
    )

    r = await a.client.post(
        _url(aid, ids[1]), json={"rating": "negative", "reason": "too_long", "note": "短一点"}
    )
    out2 = data_of(r, MessageFeedbackResponse)
    assert (out2.feedback.rating, out2.feedback.reason, out2.feedback.note) == (
        "negative",
        "too_long",
        "短一点",
    )
    assert out2.feedback.updatedAtMs >= out.feedback.updatedAtMs
    assert await count_rows(app, t.message_feedback, message_id=ids[1]) == 1
    async with db_of(app).read() as c:
        row = (await c.execute(select(t.message_feedback))).one()
        mirror = (
            await c.execute(select(t.messages.c.feedback).where(t.messages.c.id == ids[1]))
        ).scalar_one()
    assert (row.rating, row.reasons, row.comment, row.user_id, row.conversation_id) == (
        "dislike",
        ["too_long"],
        "短一点",
        a.id,
        cid,
    )
    assert mirror == "dislike"

    hist = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    by_id = {m.id: m for m in hist.messages}
    assert by_id[ids[1]].feedback.model_dump() == out2.feedback.model_dump()
    assert by_id[ids[0]].feedback is None and by_id[ids[3]].feedback is None

    # No reason, no note: both come back null.
    out3 = data_of(
        await a.client.post(_url(aid, ids[1]), json={"rating": "positive"}), MessageFeedbackResponse
    )
    assert (out3.feedback.reason, out3.feedback.note) == (None, None)


async def test_feedback_only_on_own_completed_assistant_messages(app, new_user):
    a, b = await new_user(), await new_user()
    aid, _cid, ids = await _setup(app, a)
    b_aid = await insert_agent(app, b.id)
    body = {"rating": "positive"}
    for mid in (ids[0], ids[3], ids[5], "msg_missing"):  # user, failed, streaming, missing
        env = error_of(await a.client.post(_url(aid, mid), json=body), 404)
        assert env.error.code == "message_not_found"
    # Someone else's message through one's own agent, and someone else's agent.
    error_of(await b.client.post(_url(b_aid, ids[1]), json=body), 404, "Message not found")
    error_of(await b.client.post(_url(aid, ids[1]), json=body), 404, "Agent is not available")
    # The right message under another of the owner's agents.
    other = await insert_agent(app, a.id, name="Other")
    error_of(await a.client.post(_url(other, ids[1]), json=body), 404)
    assert await count_rows(app, t.message_feedback) == 0


async def test_feedback_validation(app, new_user):
    a = await new_user()
    aid, _cid, ids = await _setup(app, a)
    for body in (
        {"rating": "like"},
        {},
        {"rating": "positive", "reason": "funny"},
        {"rating": "negative", "note": "x" * 501},
        {"rating": "positive", "note": 5},
    ):
        env = error_of(await a.client.post(_url(aid, ids[1]), json=body), 400, "Invalid request")
        assert env.error.code == "validation_error" and env.error.details
    ok = await a.client.post(
        _url(aid, ids[1]), json={"rating": "negative", "note": "x" * 500, "reason": "other"}
    )
    assert data_of(ok, MessageFeedbackResponse).feedback.note == "x" * 500
    assert await count_rows(app, t.message_feedback) == 1


async def test_native_and_rpc_ratings_are_the_same_rows(app, new_user):
    a = await new_user()
    aid, cid, ids = await _setup(app, a)
    data_of(
        await a.client.post(
            _url(aid, ids[1]), json={"rating": "negative", "reason": "too_cold", "note": "冷"}
        ),
        MessageFeedbackResponse,
    )
    native = (await a.client.get(f"/api/conversations/{cid}/messages/{ids[1]}/feedback")).json()
    assert (
        native["feedback"]["rating"],
        native["feedback"]["reasons"],
        native["feedback"]["comment"],
    ) == ("dislike", ["too_cold"], "冷")
    r = await a.client.post(
        f"/api/conversations/{cid}/messages/{ids[1]}/feedback",
        json={"feedback": "dislike", "reasons": ["outdated"], "comment": "旧"},
    )
    assert r.status_code == 200, r.text
    hist = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    fb = next(m for m in hist.messages if m.id == ids[1]).feedback
    assert (fb.rating, fb.reason, fb.note) == ("negative", "other", "旧")
    assert await count_rows(app, t.message_feedback) == 1

"""Inline threads: side conversations on a quoted span, with the quote + anchor as their context."""

from sqlalchemy import func, select

from chatmem.context import service as ctx
from chatmem.conversations import store
from chatmem.db import schema as t

from .ctx_helpers import demo_model


async def conversation_count(app) -> int:
    async with app.state.runtime.db.read() as c:
        return (await c.execute(select(func.count()).select_from(t.conversations))).scalar()


async def setup(client, n_rounds=3, answer="The capital of France is Paris. It is on the Seine."):
    cid = (await client.post("/api/conversations", json={"title": "Geo"})).json()["id"]
    ids = []
    for i in range(n_rounds):
        r = await client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": f"parent question {i}", "generate": False},
        )
        ids.append(r.json()["id"])
        r = await client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": f"{answer} ({i})", "role": "assistant"},
        )
        ids.append(r.json()["id"])
    return cid, ids


async def test_create_list_and_hidden_from_conversation_list(new_user):
    a = await new_user()
    cid, ids = await setup(a.client)
    quote = "  The capital of France is Paris, and this selection is longer than forty characters"
    r = await a.client.post(
        f"/api/conversations/{cid}/inline-threads", json={"message_id": ids[1], "quote": quote}
    )
    assert r.status_code == 201, r.text
    th = r.json()
    assert th["inline_source_conv"] == cid and th["inline_parent_id"] == ids[1]
    assert th["inline_quote"] == quote and th["title"] == "The capital of France is Paris, and this"
    assert th["message_count"] == 0
    r2 = await a.client.post(
        f"/api/conversations/{cid}/inline-threads", json={"message_id": ids[3], "quote": "Seine"}
    )
    listed = (await a.client.get(f"/api/conversations/{cid}/inline-threads")).json()["items"]
    assert [x["id"] for x in listed] == [th["id"], r2.json()["id"]]
    only = (
        await a.client.get(
            f"/api/conversations/{cid}/inline-threads", params={"message_id": ids[3]}
        )
    ).json()["items"]
    assert [x["id"] for x in only] == [r2.json()["id"]]
    convs = (await a.client.get("/api/conversations")).json()["items"]
    assert [c["id"] for c in convs] == [cid]  # threads are not in the list
    # the thread is an ordinary conversation otherwise
    r = await a.client.post(
        f"/api/conversations/{th['id']}/messages", json={"content": "why Paris?", "generate": False}
    )
    assert r.status_code == 201
    # deleting the source deletes its threads
    assert (await a.client.delete(f"/api/conversations/{cid}")).status_code == 204
    assert (await a.client.get(f"/api/conversations/{th['id']}")).status_code == 404


async def test_bad_input_and_other_users(new_user, app):
    a = await new_user()
    b = await new_user()
    cid, ids = await setup(a.client, 1)
    other_cid, other_ids = await setup(a.client, 1)
    before = await conversation_count(app)
    url = f"/api/conversations/{cid}/inline-threads"
    cases = [
        ({"message_id": ids[1], "quote": ""}, 422),
        ({"message_id": ids[1], "quote": "   "}, 422),
        ({"message_id": ids[1], "quote": "x" * 4001}, 422),
        ({"message_id": ids[1]}, 422),
        ({"message_id": ids[1], "quote": "ok", "extra": 1}, 422),
        ({"message_id": other_ids[1], "quote": "ok"}, 404),  # a message of another conversation
        ({"message_id": "msg_missing", "quote": "ok"}, 404),
    ]
    for body, status in cases:
        r = await a.client.post(url, json=body)
        assert r.status_code == status, (body, r.text)
        assert set(r.json()["error"]) == {"code", "message", "details"}
    r = await b.client.post(url, json={"message_id": ids[1], "quote": "ok"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert (await b.client.get(url)).status_code == 404
    assert await conversation_count(app) == before  # nothing written
    assert (
        await a.client.post(url, json={"message_id": ids[1], "quote": "x" * 4000})
    ).status_code == 201


async def test_thread_context_is_the_quote_and_anchor_not_the_parent_history(new_user, app):
    a = await new_user()
    long_answer = "Paris is the capital. " + "filler sentence about geography. " * 400
    cid, ids = await setup(a.client, 3, answer=long_answer)
    th = (
        await a.client.post(
            f"/api/conversations/{cid}/inline-threads",
            json={"message_id": ids[3], "quote": "Paris is the capital."},
        )
    ).json()
    await a.client.post(
        f"/api/conversations/{th['id']}/messages",
        json={"content": "tell me more about this", "generate": False},
    )
    r = await a.client.get(
        f"/api/conversations/{th['id']}/context", params={"include_messages": True}
    )
    body = r.json()
    msgs, rep = body["messages"], body["report"]
    system = msgs[0]["content"]
    assert "<excerpt>\nParis is the capital.\n</excerpt>" in system
    assert "Paris is the capital. filler" in system  # the anchor message
    anchor_part = system.split('<source-message role="assistant">\n', 1)[1].split(
        "\n</source-message>"
    )[0]
    assert len(anchor_part) == 8000  # capped as seed 001 says
    assert [m["content"] for m in msgs[1:]] == ["tell me more about this"]
    assert not any("parent question" in m["content"] for m in msgs)
    inline = next(s for s in rep["sections"] if s["name"] == "inline")
    assert inline["message_ids"] == [ids[3]] and inline["tokens"] > 0
    assert len(rep["message_ids"]) == 1
    # the same through build_turn_context, as generation calls it
    rt = app.state.runtime
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, a.id, th["id"])
        tc = await ctx.build_turn_context(
            c,
            settings=rt.settings,
            conv=conv,
            parent_id=conv.active_leaf_id,
            model=demo_model(),
            principal=None,
            rt=rt,
        )
    assert tc.messages[0].content == system

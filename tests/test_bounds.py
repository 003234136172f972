"""64-bit bounds (issue 10): ``Last-Event-ID`` and the /rpc history cursor's depth are validated
(400 before any stream starts) and every value up to 2^63 - 1 works on both databases (the
sequence and counter columns are BIGINT since migration 0006); a model's text with lone
surrogates or NUL is stored made safe instead of failing the turn."""

from __future__ import annotations

import pytest

from chatmem.generation.sse import parse
from chatmem.providers.base import Finish, TextDelta

from .conftest import make_settings
from .social_support import assert_error
from .test_generation import until
from .tree_api import new_conv, say


class SurrogateProvider:
    name = "surrogates"

    async def stream(self, model, messages, *, max_tokens):
        yield TextDelta("ok \ud800 and \x00 and \udfff.")
        yield Finish("end_turn")


@pytest.fixture
def settings(db_url):
    return make_settings(
        db_url, models=[{"id": "sur", "provider": "surrogates"}], default_model="demo"
    )


async def _finished_turn(a):
    c = await new_conv(a.client)
    r = await a.client.post(f"/api/conversations/{c['id']}/messages", json={"content": "hi"})
    assert r.status_code == 202, r.text
    mid = r.json()["assistant_message_id"]

    async def done():
        m = await a.client.get(f"/api/conversations/{c['id']}/messages/{mid}")
        return m.json()["status"] != "streaming"

    await until(done)
    return c["id"], mid


async def test_last_event_id_is_a_64_bit_sequence_number(app, new_user):
    a = await new_user()
    cid, mid = await _finished_turn(a)
    url = f"/api/conversations/{cid}/messages/{mid}/stream"
    for bad in ("-1", "+5", "1_0", "١٢", "1.5", "x", str(2**63), "9" * 30, " 7 7"):
        for how in ("header", "query"):
            kw = (
                {"headers": {"Last-Event-ID": bad.encode()}}  # raw header bytes
                if how == "header"
                else {"params": {"last_event_id": bad}}
            )
            r = await a.client.get(url, **kw)
            fits_schema = bad.isascii() and bad.isdigit() and len(bad) <= 19
            if how == "query" and not fits_schema:  # the query's pattern: [0-9]{1,19}
                assert_error(r, 422, "validation_error")
                continue
            assert_error(r, 400, "invalid_last_event_id")
    # beyond the end of the log, up to the 64-bit maximum: a complete answer, never a cut stream
    for big in (2**31 - 1, 2**31, 2**32 + 5, 2**63 - 1):
        r = await a.client.get(url, headers={"Last-Event-ID": str(big)})
        assert r.status_code in (200, 204), (big, r.status_code, r.text)
        if r.status_code == 200:
            events = parse(r.text)
            assert events and events[-1]["type"] in ("done", "error"), (big, r.text[:300])


async def test_rpc_cursor_depth_is_bounded(app, new_user):
    a = await new_user()
    agent = (await a.client.post("/api/agents", json={"name": "A", "handle": "a"})).json()["id"]
    cid = (await a.client.get(f"/rpc/chat/inbox/{agent}/conversation")).json()["data"][
        "conversationId"
    ]
    for i in range(3):
        await say(a.client, cid, f"m{i}", role="user" if i % 2 == 0 else "assistant")
    url = f"/rpc/chat/inbox/{agent}/messages"
    for bad in (
        f"5:{2**63}:msg_x",
        "5:99999999999999999999999:msg_x",
        "5:²:msg_x",
        "5:-1:msg_x",
        "5::msg_x",
    ):
        r = await a.client.get(url, params={"cursor": bad})
        assert r.status_code == 400, (bad, r.text)
        body = r.json()
        assert body["ok"] is False and body["error"]["code"], body
    for ok in (f"{2**40}:{2**63 - 1}:msg_x", f"{2**40}:{2**31}:msg_x", f"{2**40}:0:msg_x"):
        r = await a.client.get(url, params={"cursor": ok})
        assert r.status_code == 200, (ok, r.text)
        assert r.json()["ok"] is True


async def test_model_text_with_surrogates_is_stored_safe(app, new_user):
    app.state.runtime.providers.register("surrogates", SurrogateProvider())
    a = await new_user()
    c = await new_conv(a.client)
    r = await a.client.post(
        f"/api/conversations/{c['id']}/messages", json={"content": "hi", "model": "sur"}
    )
    mid = r.json()["assistant_message_id"]

    async def done():
        m = await a.client.get(f"/api/conversations/{c['id']}/messages/{mid}")
        return m.json()["status"] != "streaming"

    await until(done)
    m = (await a.client.get(f"/api/conversations/{c['id']}/messages/{mid}")).json()
    assert m["status"] == "complete" and m["text"] == "ok \ufffd and \ufffd and \ufffd.", m
    events = parse((await a.client.get(f"/api/conversations/{c['id']}/messages/{mid}/stream")).text)
    assert "".join(e["data"]["text"] for e in events if e["type"] == "text_delta") == m["text"]

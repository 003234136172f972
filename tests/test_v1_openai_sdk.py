"""The OpenAI-compatible door driven by the official ``openai`` SDK (sync and async, streamed and
not) against a live ``chatmem serve`` on SQLite and PostgreSQL: each request is a chatmem turn in
the right conversation — found by the resent history without duplicating rows, or named by the
header / metadata — with memories in its context, stop sequences, the usage chunk, and memory
extraction after it."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from .servers import Server, create_user

pytestmark = pytest.mark.slow


@pytest.fixture
def live(db_url):
    key = create_user(db_url, "sdk@example.com")
    server = Server(db_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "0"}, args=()).start()
    try:
        yield server, key
    finally:
        server.stop()


def _api(server, key) -> httpx.Client:
    return httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"})


def _path(api: httpx.Client, cid: str) -> list[tuple[str, str]]:
    items = api.get(f"/api/conversations/{cid}/messages", params={"limit": 200}).json()["items"]
    return [(m["role"], m["text"]) for m in items]


def _until(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_sync_sdk_continues_conversations_with_memory(live):
    server, key = live
    client = openai.OpenAI(base_url=f"{server.base}/v1", api_key=key, max_retries=0)
    api = _api(server, key)
    assert "demo" in [m.id for m in client.models.list().data]

    # a memory the user wrote: context assembly adds it to what the client sent
    mem = api.post("/api/me/memories", json={"memory_text": "Sam drinks green tea"}).json()
    msgs = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "My name is Sam. What do I drink?"},
    ]
    raw = client.chat.completions.with_raw_response.create(model="demo", messages=msgs)
    first = raw.parse()
    cid = raw.headers["x-chatmem-conversation"]
    assert first.object == "chat.completion" and first.choices[0].finish_reason == "stop"
    answer = first.choices[0].message.content
    assert answer and first.usage.completion_tokens > 0 and first.usage.total_tokens > 0
    mid = raw.headers["x-chatmem-message"]
    report = api.get(f"/api/conversations/{cid}/context", params={"message_id": mid}).json()
    assert mem["id"] in report["report"]["memory_ids"]

    # a stateless client resends everything: same conversation, no duplicated rows
    msgs += [{"role": "assistant", "content": answer}, {"role": "user", "content": "Thanks!"}]
    raw = client.chat.completions.with_raw_response.create(model="demo", messages=msgs)
    assert raw.headers["x-chatmem-conversation"] == cid
    second = raw.parse().choices[0].message.content
    assert [r for r, _ in _path(api, cid)] == ["user", "assistant", "user", "assistant"]
    assert _path(api, cid)[2] == ("user", "Thanks!")

    # streamed, with the usage chunk and a stop sequence
    msgs += [{"role": "assistant", "content": second}, {"role": "user", "content": "Say more"}]
    stream = client.chat.completions.create(
        model="demo",
        messages=msgs,
        stream=True,
        stream_options={"include_usage": True},
        stop=["demo"],
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[0].choices[0].delta.role == "assistant"
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    assert text and "demo" not in text
    path = _path(api, cid)
    assert len(path) == 6 and path[-1] == ("assistant", text)  # stored = what the client saw

    # the header names a conversation explicitly (stored history is the truth)
    other = api.post("/api/conversations", json={"title": "named"}).json()["id"]
    client.chat.completions.create(
        model="demo",
        messages=[{"role": "user", "content": "into the named one"}],
        extra_headers={"X-Chatmem-Conversation": other},
    )
    client.chat.completions.create(
        model="demo",
        messages=[{"role": "user", "content": "via metadata"}],
        metadata={"chatmem_conversation": other},
    )
    assert [t for _, t in _path(api, other)][::2] == ["into the named one", "via metadata"]
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="demo",
            messages=[{"role": "user", "content": "x"}],
            extra_headers={"X-Chatmem-Conversation": "c_not_mine"},
        )

    # history begun elsewhere is stored first, then continued like any other
    begun = [
        {"role": "user", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Nice city."},
        {"role": "user", "content": "Where do I live?"},
    ]
    raw = client.chat.completions.with_raw_response.create(model="demo", messages=begun)
    imported = raw.headers["x-chatmem-conversation"]
    assert imported != cid
    assert [t for _, t in _path(api, imported)][:3] == [m["content"] for m in begun]

    # bad input: a clear 4xx, nothing written
    before = len(api.get("/api/conversations").json()["items"])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="no-such-model", messages=begun[:1])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(
            model="demo", messages=[{"role": "assistant", "content": "x"}]
        )
    assert len(api.get("/api/conversations").json()["items"]) == before
    bad = openai.OpenAI(base_url=f"{server.base}/v1", api_key="cm_wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()

    # extraction ran after the turns (the worker in the serving process)
    def extracted():
        items = api.get("/api/me/memories").json()["items"]
        return [m for m in items if "Sam" in m["memory_text"] and m["origin"] == "extracted"]

    assert _until(extracted)


async def test_async_sdk_stream_and_not(live):
    server, key = live
    client = openai.AsyncOpenAI(base_url=f"{server.base}/v1", api_key=key, max_retries=0)
    api = _api(server, key)
    msgs = [{"role": "user", "content": "Hello from asyncio"}]
    raw = await client.chat.completions.with_raw_response.create(model="demo", messages=msgs)
    cid = raw.headers["x-chatmem-conversation"]
    reply = raw.parse().choices[0].message.content
    msgs += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Stream now"}]
    stream = await client.chat.completions.create(
        model="demo", messages=msgs, stream=True, stream_options={"include_usage": True}
    )
    chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith('You asked: "Stream now"')
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    ids = {c.id for c in chunks}
    assert len(ids) == 1 and ids.pop().startswith("chatcmpl-")
    assert _path(api, cid) == [
        ("user", "Hello from asyncio"),
        ("assistant", reply),
        ("user", "Stream now"),
        ("assistant", text),
    ]
    # the turn is a native one: its stream resumes on the native route too
    mid = _path_ids(api, cid)[-1]
    r = api.get(f"/api/conversations/{cid}/messages/{mid}/stream")
    assert r.status_code == 200 and "event: done" in r.text
    await client.close()


def _path_ids(api: httpx.Client, cid: str) -> list[str]:
    return [m["id"] for m in api.get(f"/api/conversations/{cid}/messages").json()["items"]]

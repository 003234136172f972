"""contracts/fastroute.py: the two hot routes answer every request as FastAPI's own handler does.

Each request of a corpus — happy bodies, every kind of bad body, content types, missing and
wrong credentials, errors from the endpoint, the event stream, the 202 and log-mode answers —
is sent with the fast path on and off (``fastroute.ENABLED``) with the same ``X-Request-ID``;
status, header list and body must be byte-identical once the ids and times each run makes
anew are masked. Then: the fast path really answers the happy requests (FastAPI's dependency
solver is never called), and a route of another shape keeps FastAPI's handler.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi import APIRouter, FastAPI, Query
from fastapi.routing import APIRoute

from chatmem.contracts import fastroute
from chatmem.generation import sse

#: what differs between two runs of the same request: ids, millisecond times, generation time
_VOLATILE = [
    (re.compile(rb"\b[a-z]+_[0-9a-f]{32}\b"), b"ID"),
    (re.compile(rb"\b1[0-9]{12}\b"), b"TS"),
    (re.compile(rb'"gen_ms": ?[0-9]+'), b'"gen_ms":N'),
]


def _mask(data: bytes) -> bytes:
    for rx, sub in _VOLATILE:
        data = rx.sub(sub, data)
    return data


def _events(body: bytes) -> bytes:
    """An event stream's events, the text deltas joined: where a flush falls in a turn (and so
    how its text is split into events and numbered) depends on timing, not on the route."""
    out: list = []
    for e in sse.parse(body.decode()):
        if e["type"] == "text_delta" and out and out[-1]["type"] == "text_delta":
            out[-1]["data"]["text"] += e["data"]["text"]
        else:
            out.append({"type": e["type"], "data": e["data"]})
    return json.dumps(out).encode()


async def _answer(client, method, url, *, fast: bool, **kw):
    fastroute.ENABLED = fast
    try:
        r = await client.request(method, url, **kw)
    finally:
        fastroute.ENABLED = True
    headers = [(k, _mask(v)) for k, v in r.headers.raw]
    body = r.content
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        body = _events(body)
    return r.status_code, headers, _mask(body)


JSON = {"content-type": "application/json"}
SSE = {**JSON, "accept": "text/event-stream"}

#: (body bytes, headers) for POST /api/conversations
CONVERSATION_BODIES = [
    (b"{}", JSON),
    (b'{"title": "hello \\u00fc"}', JSON),
    (b'{"title": null, "pinned": true, "starred": true}', JSON),
    (b"{}", {**JSON, "accept-language": "de-DE,de;q=0.9"}),
    (b'{"title": "' + b"x" * 201 + b'"}', JSON),
    (b'{"title": 5}', JSON),
    (b'{"unknown": 1}', JSON),
    (b'{"title": "a\\u0000b"}', JSON),
    (b'{"title": "\\ud800"}', JSON),
    (b'{"project_id": "p_missing"}', JSON),
    (b'{"agent_id": "a_missing"}', JSON),
    (b"[]", JSON),
    (b"null", JSON),
    (b"not json", JSON),
    (b'{"title": "\xff"}', JSON),
    (b"[" * 5000 + b"]" * 5000, JSON),
    (b"", JSON),
    (b"{}", {"content-type": "application/json; charset=utf-8"}),
    (b"{}", {"content-type": "text/plain"}),
    (b"{}", {}),
]


@pytest.mark.parametrize(("body", "headers"), CONVERSATION_BODIES)
async def test_create_conversation_answers_as_fastapi(new_user, body, headers):
    u = await new_user()
    kw = {"content": body, "headers": {**headers, "x-request-id": "req_fastroute_test"}}
    fast = await _answer(u.client, "POST", "/api/conversations", fast=True, **kw)
    slow = await _answer(u.client, "POST", "/api/conversations", fast=False, **kw)
    assert fast == slow


@pytest.mark.parametrize(
    "auth",
    [
        {},
        {"authorization": "Basic abc"},
        {"authorization": "Bearer "},
        {"authorization": "Bearer cm_wrong"},
        {"cookie": "chatmem_session=nope"},
    ],
)
@pytest.mark.parametrize("body", [b"{}", b"not json", b'{"title": 5}'])
async def test_credentials_fail_as_with_fastapi(anon, auth, body):
    kw = {"content": body, "headers": {**JSON, **auth, "x-request-id": "req_fastroute_auth"}}
    for url in ("/api/conversations", "/api/conversations/c_x/messages"):
        fast = await _answer(anon, "POST", url, fast=True, **kw)
        slow = await _answer(anon, "POST", url, fast=False, **kw)
        assert fast == slow  # 401, or 422 for a body that is no JSON (parsed first)
        assert fast[0] == (422 if body == b"not json" else 401)


MESSAGE_BODIES = [
    (b'{"content": "hello"}', SSE),
    (b'{"content": "hello"}', JSON),
    (b'{"content": "logged", "generate": false}', JSON),
    (b'{"content": "said", "role": "assistant"}', JSON),
    (b'{"content": "hello", "parent_id": "msg_missing"}', SSE),
    (b'{"content": "hello", "model": "no-such-model"}', SSE),
    (b'{"content": ""}', SSE),
    (b'{"content": 5}', SSE),
    (b'{"role": "system", "content": "x"}', SSE),
    (b'{"content": "' + b"x" * 300_000 + b'"}', SSE),
    (b"not json", SSE),
    (b"", SSE),
    (b'{"content": "hello"}', {"content-type": "text/plain", "accept": "text/event-stream"}),
]


@pytest.mark.parametrize(("body", "headers"), MESSAGE_BODIES)
async def test_post_message_answers_as_fastapi(new_user, body, headers):
    u = await new_user()
    answers = []
    for fast in (True, False):  # a conversation of its own each: the turn numbers agree
        cid = (await u.client.post("/api/conversations", json={})).json()["id"]
        kw = {"content": body, "headers": {**headers, "x-request-id": "req_fastroute_msg"}}
        url = f"/api/conversations/{cid}/messages"
        answers.append(await _answer(u.client, "POST", url, fast=fast, **kw))
    assert answers[0] == answers[1]


async def test_unknown_conversation_answers_as_fastapi(new_user):
    u = await new_user()
    kw = {"content": b'{"content": "hi"}', "headers": {**SSE, "x-request-id": "req_fastroute_404"}}
    url = "/api/conversations/c_missing/messages"
    fast = await _answer(u.client, "POST", url, fast=True, **kw)
    slow = await _answer(u.client, "POST", url, fast=False, **kw)
    assert fast == slow and fast[0] == 404


async def test_the_fast_path_answers_the_happy_requests(new_user, monkeypatch):
    """FastAPI's dependency solver runs for neither hot route's happy request (it does with the
    fast path off), so a FastAPI upgrade that turns the fast path off is noticed here."""
    import fastapi.routing

    calls = []
    solve = fastapi.routing.solve_dependencies

    async def counted(*a, **kw):
        calls.append(kw["dependant"].call.__name__)
        return await solve(*a, **kw)

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", counted)
    u = await new_user()
    cid = (await u.client.post("/api/conversations", json={})).json()["id"]
    r = await u.client.post(f"/api/conversations/{cid}/messages", json={"content": "hi"})
    assert r.status_code == 202
    assert calls == []
    fastroute.ENABLED = False
    try:
        await u.client.post("/api/conversations", json={})
    finally:
        fastroute.ENABLED = True
    assert calls == ["create"]


def test_routes_of_other_shapes_keep_fastapis_handler():
    router = APIRouter(route_class=fastroute.FastRoute)

    @router.get("/q", response_model=dict)
    async def with_query(q: str = Query("x")):
        return {}

    @router.get("/plain")
    async def without_model():
        return {}

    @router.get("/i/{n}", response_model=dict)
    async def int_path(n: int):
        return {}

    @router.get("/ok/{s}", response_model=dict)
    async def covered(s: str):
        return {}

    app = FastAPI()
    app.include_router(router)
    shapes = {r.name: fastroute.plan_for(r) for r in router.routes if isinstance(r, APIRoute)}
    assert shapes["with_query"] is None
    assert shapes["without_model"] is None
    assert shapes["int_path"] is None
    assert shapes["covered"] is not None

"""Arbitrary Unicode through every text field (issue 10): lone UTF-16 surrogates and NUL answer a
4xx JSON error and write nothing; any other text is either accepted — and then reads back
exactly, and every later read still renders — or refused with a 4xx; never a 5xx. On SQLite and
PostgreSQL.

``FIELDS`` names one request per text field of every JSON request body in the OpenAPI document;
``test_every_text_field_is_covered`` fails when a route gains a text field this file does not
exercise. Bodies are sent as ASCII JSON (``\\ud800`` escapes), exactly as an attacker would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from chatmem import unicode

from .conftest import make_settings
from .tree_api import new_conv, say, table_counts


@pytest.fixture
def settings(db_url):
    # no job worker: background jobs would change row counts between the before/after snapshots
    return make_settings(db_url, run_worker=False)


@dataclass(frozen=True)
class Field:
    method: str
    url: str  # {cid} {mid} {pid} {agent} {mem} {amem} filled from the world
    body: dict  # the field to fill is the string "@" (anywhere, also as a dict key)
    field: str  # the OpenAPI path it covers, e.g. "content" or "messages.[].parts.[].text"
    echo: tuple | None = None  # where an accepted value reads back, in the response body
    stripped: bool = False  # titles and names read back without their surrounding spaces


def F(method, url, field, body, echo=None, stripped=False) -> Field:
    return Field(method, url, body, field, echo, stripped)


PERSONA = dict.fromkeys(
    "name handle headline lastActive status relationship topic chemistry chemistryLabel "
    "rhythm profileNote".split(),
    "x",
)
AGENT = {"name": "A", "handle": "h"}
MSG = "/api/conversations/{cid}/messages"

FIELDS = [
    F("POST", "/api/auth/login", "email", {"email": "@", "password": "p"}),
    F("POST", "/api/auth/login", "password", {"email": "a@b.c", "password": "@"}),
    *(F("PATCH", "/api/me", f, {f: "@"}) for f in ("name", "language", "theme")),
    F(
        "POST",
        "/api/me/password",
        "current_password",
        {"current_password": "@", "new_password": "a long new password"},
    ),
    F(
        "POST",
        "/api/me/password",
        "new_password",
        {"current_password": "wrong", "new_password": "@"},
    ),
    F("POST", "/api/conversations", "title", {"title": "@"}, ("title",), stripped=True),
    F("POST", "/api/conversations", "workspace_id", {"workspace_id": "@"}),
    F("POST", "/api/projects", "workspace_id", {"name": "P", "workspace_id": "@"}),
    F("POST", "/api/workspaces", "name", {"name": "@"}, ("name",), stripped=True),
    F("PATCH", "/api/workspaces/{wid}", "name", {"name": "@"}),
    F("PATCH", "/api/workspaces/{wid}/members/{uid}", "role", {"role": "@"}),
    *(
        F("POST", "/api/workspaces/{wid}/invites", f, {"email": "x@y.z", "role": "member", f: "@"})
        for f in ("email", "role")
    ),
    F("POST", "/api/workspaces/{wid}/transfer", "user_id", {"user_id": "@"}),
    F("POST", "/api/workspace-invites/join", "token", {"token": "@"}),
    *(F("POST", "/api/conversations", f, {f: "@"}) for f in ("agent_id", "model", "project_id")),
    *(F("PATCH", "/api/conversations/{cid}", f, {f: "@"}) for f in ("model", "project_id")),
    F("PATCH", "/api/conversations/{cid}", "title", {"title": "@"}, ("title",), stripped=True),
    F("POST", MSG, "content", {"content": "@", "generate": False}, ("text",)),
    F("POST", MSG, "content", {"content": [{"kind": "text", "text": "@"}], "generate": False}),
    F(
        "POST",
        MSG,
        "content",
        {"content": [{"kind": "thinking", "text": "x", "@": 1}], "generate": False},
    ),
    F(
        "POST",
        MSG,
        "metadata",
        {"content": "x", "generate": False, "metadata": {"k": "@"}},
        ("metadata", "k"),
    ),
    F("POST", MSG, "metadata", {"content": "x", "generate": False, "metadata": {"@": [1]}}),
    *(
        F("POST", MSG, f, {"content": "x", "generate": False, f: "@"})
        for f in ("model", "parent_id", "role")
    ),
    F("PATCH", MSG + "/{mid}", "content", {"content": "@"}, ("text",)),
    F("PATCH", "/api/conversations/{cid}/active-leaf", "leaf_id", {"leaf_id": "@"}),
    *(F("POST", "/api/conversations/{cid}/fork", f, {f: "@"}) for f in ("message_id", "title")),
    *(
        F("POST", "/api/projects", f, {"name": "P", f: "@"})
        for f in ("accent", "description", "emoji", "instructions")
    ),
    F("POST", "/api/projects", "name", {"name": "@"}),
    *(
        F("PATCH", "/api/projects/{pid}", f, {f: "@"})
        for f in ("accent", "description", "emoji", "instructions", "name")
    ),
    *(
        F(m, u, f, {**(AGENT if m == "POST" else {}), f: "@"})
        for m, u in (("POST", "/api/agents"), ("PATCH", "/api/agents/{agent}"))
        for f in (
            "default_prompt",
            "description",
            "guardrails_prompt",
            "handle",
            "headline",
            "image_key",
            "name",
            "opening_message",
            "personality_prompt",
            "status",
            "story_background",
            "tone_prompt",
            "visibility",
        )
    ),
    *(
        F("POST", "/api/conversations/{cid}/regenerate", f, {f: "@"})
        for f in ("message_id", "model")
    ),
    F("POST", "/api/conversations/{cid}/stop", "message_id", {"message_id": "@"}),
    F(
        "POST",
        "/api/conversations/{cid}/inline-threads",
        "quote",
        {"message_id": "{mid}", "quote": "@"},
    ),
    F(
        "POST",
        "/api/conversations/{cid}/inline-threads",
        "message_id",
        {"message_id": "@", "quote": "q"},
    ),
    *(
        F(
            "POST",
            "/rpc/chat/inbox",
            "conversation." + k,
            {
                "conversationId": "{cid}",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
                "conversation": {**PERSONA, k: "@"},
            },
        )
        for k in (
            "chemistry",
            "chemistryLabel",
            "handle",
            "headline",
            "id",
            "imageKey",
            "lastActive",
            "name",
            "profileNote",
            "relationship",
            "rhythm",
            "status",
            "topic",
        )
    ),
    F(
        "POST",
        "/rpc/chat/inbox",
        "conversationId",
        {
            "conversationId": "@",
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            "conversation": PERSONA,
        },
    ),
    *(
        F(
            "POST",
            "/rpc/chat/inbox",
            "messages.[]." + path,
            {"messages": [msg], "conversation": {**PERSONA, "id": "{agent}"}},
        )
        for path, msg in (
            ("id", {"id": "@", "role": "user", "parts": [{"type": "text", "text": "hi"}]}),
            ("role", {"role": "@", "parts": [{"type": "text", "text": "hi"}]}),
            ("parts.[].text", {"role": "user", "parts": [{"type": "text", "text": "@"}]}),
            ("parts.[].type", {"role": "user", "parts": [{"type": "@", "text": "hi"}]}),
        )
    ),
    *(
        F(
            "POST",
            "/rpc/chat/inbox/{agent}/messages/{amid}/feedback",
            f,
            {"rating": "positive", f: "@"},
        )
        for f in ("note", "reason")
    ),
    F("POST", "/rpc/chat/inbox/{agent}/messages/{amid}/feedback", "rating", {"rating": "@"}),
    *(
        F("PATCH", "/rpc/agent/my/{agent}/memories/{amem}", f, {f: "@"})
        for f in ("content", "status", "type")
    ),
    *(
        F("POST", "/api/me/memories", f, {"memory_text": "m", f: "@"})
        for f in ("agent_id", "memory_type", "slot", "status", "value")
    ),
    F("POST", "/api/me/memories", "memory_text", {"memory_text": "@"}),
    *(
        F("PATCH", "/api/me/memories/{mem}", f, {f: "@"})
        for f in ("memory_text", "memory_type", "reason", "slot", "status", "value")
    ),
    *(
        F("POST", "/api/workspaces/{wid}/memories", f, {"memory_text": "m", f: "@"})
        for f in ("memory_type", "slot", "status", "value")
    ),
    F("POST", "/api/workspaces/{wid}/memories", "memory_text", {"memory_text": "@"}),
    *(
        F("PATCH", "/api/workspaces/{wid}/memories/{wmem}", f, {f: "@"})
        for f in ("memory_text", "memory_type", "reason", "slot", "status", "value")
    ),
    *(
        F("POST", MSG + "/{amid_native}/feedback", f, {"feedback": "like", f: "@"})
        for f in ("comment",)
    ),
    F("POST", MSG + "/{amid_native}/feedback", "feedback", {"feedback": "@"}),
    F(
        "POST",
        MSG + "/{amid_native}/feedback",
        "reasons.[]",
        {"feedback": "like", "reasons": ["@"]},
    ),
]
V1 = "/v1/chat/completions"
V1_USER = {"role": "user", "content": "hi"}
FIELDS += [
    F("POST", V1, "model", {"model": "@", "messages": [V1_USER]}),
    *(
        F("POST", V1, "messages.[]." + k, {"model": "demo", "messages": [{**V1_USER, k: "@"}]})
        for k in ("content", "name", "role", "tool_call_id")
    ),
    F("POST", V1, "stop", {"model": "demo", "messages": [V1_USER], "stop": "@"}),
    F("POST", V1, "stop.[]", {"model": "demo", "messages": [V1_USER], "stop": ["@"]}),
    F("POST", V1, "tool_choice", {"model": "demo", "messages": [V1_USER], "tool_choice": "@"}),
    # account deletion: the confirmation never matches these, so nothing is ever deleted
    F("DELETE", "/api/account", "confirm", {"confirm": "@"}),
    F("DELETE", "/api/admin/users/{uid}", "confirm", {"confirm": "@"}),
    # the admin console (the world's user is not an admin: each answers a 4xx, never a 5xx)
    *(
        F("POST", "/api/admin/users", f, {"email": "n@example.com", f: "@"})
        for f in ("name", "password")
    ),
    F("POST", "/api/admin/users", "email", {"email": "@"}),
    F("PATCH", "/api/admin/users/{uid}", "role", {"role": "@"}),
    F("POST", "/api/admin/users/{uid}/password", "password", {"password": "@"}),
    F("POST", "/api/me/keys", "name", {"name": "@"}),  # stored stripped: no exact echo
]
QUERIES = [
    ("/api/search", "q"),
    ("/api/conversations", "project_id"),
    ("/api/conversations", "cursor"),
    ("/api/me/memories", "q"),
    ("/api/workspaces/{wid}/memories", "q"),
    ("/rpc/chat/inbox/{agent}/messages", "cursor"),
]


def _fill(value, text: str, ids: dict):
    if isinstance(value, str):
        return text if value == "@" else value.format(**ids)
    if isinstance(value, dict):
        return {_fill(k, text, ids): _fill(v, text, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, text, ids) for v in value]
    return value


def _dig(body, path):
    if path == ("text",) and "text" not in body:
        path = ("blocks", 0, "text")
    for k in path:
        body = body[k]
    return body


def _openapi_text_fields(doc: dict) -> set[tuple[str, str, str]]:
    comps = doc["components"]["schemas"]

    def resolve(s):
        while "$ref" in s:
            s = comps[s["$ref"].split("/")[-1]]
        return s

    def walk(s, path, out, depth=0):
        s = resolve(s)
        if depth > 8:
            return
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in s.get(key, []):
                walk(sub, path, out, depth + 1)
        if s.get("type") == "string":
            out.add(".".join(path))
        for k, v in s.get("properties", {}).items():
            walk(v, [*path, k], out, depth + 1)
        if s.get("type") == "array" and "items" in s:
            walk(s["items"], [*path, "[]"], out, depth + 1)

    found = set()
    for url, ops in doc["paths"].items():
        for method, op in ops.items():
            media = (op.get("requestBody") or {}).get("content", {}).get("application/json")
            if media:
                out: set[str] = set()
                walk(media["schema"], [], out)
                found |= {(method.upper(), url, f) for f in out}
    return found


def _template(url: str) -> str:
    """Our URL (world ids) as the OpenAPI path template."""
    if url.startswith("/rpc"):
        subs = {"{agent}": "{agentId}", "{amem}": "{memoryId}", "{amid}": "{messageId}"}
    else:
        subs = {
            "{pid}": "{obj_id}",
            "{agent}": "{obj_id}",
            "{mem}": "{mid}",
            "{wmem}": "{mid}",
            "{amid_native}": "{mid}",
        }
    for k, v in subs.items():
        url = url.replace(k, v)
    return url


async def test_every_text_field_is_covered(app):
    doc = (await _client(app).get("/openapi.json")).json()
    covered = {(f.method, f.url, f.field) for f in FIELDS}
    normalised = {(m, _template(u), f) for m, u, f in covered}
    missing = {
        (m, u, f)
        for m, u, f in _openapi_text_fields(doc)
        if (m, u, f) not in normalised and f not in ("",)
    }
    assert not missing, f"text fields without a Unicode case here: {sorted(missing)}"


def _client(app):
    import httpx

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
async def world(app, new_user):
    a = await new_user()
    c = await new_conv(a.client, title="t")
    q = await say(a.client, c["id"], "question")
    ans = await say(a.client, c["id"], "answer", role="assistant")
    pid = (await a.client.post("/api/projects", json={"name": "Proj"})).json()["id"]
    wid = (await a.client.post("/api/workspaces", json={"name": "Team"})).json()["id"]
    r = await a.client.post("/api/agents", json={"name": "Ag", "handle": "ag"})
    agent = r.json()["id"]
    mem = (await a.client.post("/api/me/memories", json={"memory_text": "likes tea"})).json()
    amem = (
        await a.client.post(
            "/api/me/memories", json={"memory_text": "agent fact", "agent_id": agent}
        )
    ).json()
    wmem = (
        await a.client.post(f"/api/workspaces/{wid}/memories", json={"memory_text": "team fact"})
    ).json()
    conv = (await a.client.get(f"/rpc/chat/inbox/{agent}/conversation")).json()["data"]
    r = await a.client.post(
        f"/api/conversations/{conv['conversationId']}/messages",
        json={"content": "hello", "role": "assistant"},
    )
    ids = {
        "cid": c["id"],
        "mid": q["id"],
        "pid": pid,
        "agent": agent,
        "mem": mem["id"],
        "amem": amem["id"],
        "amid": r.json()["id"],
        "amid_native": ans["id"],
        "uid": a.id,
        "wid": wid,
        "wmem": wmem["id"],
    }
    return a, ids


async def _send(a, f: Field, text: str, ids: dict):
    body = _fill(f.body, text, ids)
    url = f.url.format(**ids)
    r = await a.client.request(
        f.method, url, content=json.dumps(body), headers={"content-type": "application/json"}
    )
    return r, body


def _assert_4xx_json(r, url: str) -> None:
    assert 400 <= r.status_code < 500, (url, r.status_code, r.text[:300])
    body = r.json()
    err = body["error"]
    assert err["code"] and err["message"]
    if url.startswith("/rpc"):
        assert body["ok"] is False


async def _check(app, a, f: Field, text: str, ids: dict) -> None:
    before = await table_counts(app)
    r, body = await _send(a, f, text, ids)
    assert r.status_code < 500, (f, text, r.status_code, r.text[:300])
    if unicode.problem(text):
        _assert_4xx_json(r, f.url)
        assert await table_counts(app) == before, (f, text)
        return
    if r.status_code >= 400:
        _assert_4xx_json(r, f.url)
        return
    if "text/event-stream" in r.headers.get("content-type", "") or (
        f.url.startswith("/rpc/chat/inbox") and f.method == "POST" and "feedback" not in f.url
    ):
        return  # a turn's reply (text stream): rendering is checked by the reads below
    out = r.json() if r.content else None
    want = text.strip() if f.stripped else text
    if f.echo and out is not None and want:  # accepted text reads back exactly ("" = default)
        assert _dig(out, f.echo) == want, (f, text, out)


async def _reads_render(a, ids: dict) -> None:
    for url in (
        "/api/conversations",
        f"/api/conversations/{ids['cid']}/messages",
        f"/api/conversations/{ids['cid']}/messages?mode=tree",
        "/api/projects",
        "/api/agents",
        "/api/me/memories",
        f"/rpc/chat/inbox/{ids['agent']}/conversation",
        "/api/me",
    ):
        r = await a.client.get(url)
        assert r.status_code == 200, (url, r.text[:300])


BAD = ("\ud800", "a\udfffb", "\udc00\ud800", "x\x00y", "\ud83d")


async def test_surrogates_and_nul_in_every_field_are_refused(app, world):
    a, ids = world
    for f in FIELDS:
        for text in BAD:
            await _check(app, a, f, text, ids)
    await _reads_render(a, ids)


def _query(text: str) -> str:
    return quote_from_bytes(text.encode("utf-8", "surrogatepass"))


async def test_surrogate_bytes_in_query_strings(app, world):
    a, ids = world
    for url, name in QUERIES:
        for text in (*BAD, "é", "😀", "\ufffe"):
            r = await a.client.get(f"{url.format(**ids)}?{name}={_query(text)}")
            assert r.status_code < 500, (url, text, r.text[:300])
            r.json()


#: Any code point, surrogates included (Hypothesis leaves them out by default), and often one
#: of the characters neither database can store.
ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(exclude_categories=()), st.sampled_from(["\ud800", "\udfff", "\x00"])
    ),
    max_size=40,
)


@hsettings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_arbitrary_unicode_through_every_text_field(app, world, data):
    a, ids = world
    f = data.draw(st.sampled_from(FIELDS), label="field")
    text = data.draw(ANY_TEXT, label="text")
    await _check(app, a, f, text, ids)
    if data.draw(st.integers(0, 9), label="read") == 0:
        await _reads_render(a, ids)

"""Bad input: a clear ``{"error": {"code", "message", "details"}}`` with the right status, and
nothing written (every table's row count and the conversation itself are unchanged)."""

from __future__ import annotations

import base64
import json

import pytest
from sqlalchemy import insert

from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id

from .conftest import make_settings
from .tree_api import conv, new_conv, path, say, table_counts

LIMIT = 1024  # max_message_bytes for this module


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, max_message_bytes=LIMIT)


def _err(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, (r.request.method, r.request.url, r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error", "request_id"} and body["request_id"] == r.headers["x-request-id"]
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code, body
    return body["error"]


@pytest.fixture
async def world(new_user, app):
    a = await new_user()
    c = await new_conv(a.client, title="stable")
    q = await say(a.client, c["id"], "q")
    ans = await say(a.client, c["id"], "a", role="assistant")
    other = await new_conv(a.client, title="other")
    stranger_msg = await say(a.client, other["id"], "elsewhere")
    return a, c["id"], q, ans, stranger_msg


async def _unchanged(app, a, cid, snapshot):
    counts, conv_before, path_before = snapshot
    assert await table_counts(app) == counts
    assert await conv(a.client, cid) == conv_before
    assert await path(a.client, cid) == path_before


async def _snapshot(app, a, cid):
    return await table_counts(app), await conv(a.client, cid), await path(a.client, cid)


async def test_conversation_bodies(world, app):
    a, cid, *_ = world
    snap = await _snapshot(app, a, cid)
    cases = [
        ("POST", "/api/conversations", {"title": "x", "colour": "red"}),  # unknown field
        ("POST", "/api/conversations", {"title": 5}),
        ("POST", "/api/conversations", {"pinned": [1]}),
        ("POST", "/api/conversations", {"title": "x" * 201}),
        ("POST", "/api/conversations", {"project_id": {"id": "p"}}),
        ("POST", "/api/conversations", [1, 2]),
        ("PATCH", f"/api/conversations/{cid}", {"owner": "me"}),
        ("PATCH", f"/api/conversations/{cid}", {"title": ""}),
        ("PATCH", f"/api/conversations/{cid}", {"title": "y" * 201}),
        ("PATCH", f"/api/conversations/{cid}", {"archived": "perhaps"}),
        ("PATCH", f"/api/conversations/{cid}", {"message_count": 99}),
        ("PATCH", f"/api/conversations/{cid}/active-leaf", {}),
        ("PATCH", f"/api/conversations/{cid}/active-leaf", {"leaf_id": 3}),
        ("PATCH", f"/api/conversations/{cid}/active-leaf", {"leaf_id": "x", "extra": 1}),
        ("POST", f"/api/conversations/{cid}/fork", {"title": "t" * 201}),
        ("POST", f"/api/conversations/{cid}/fork", {"parent": "x"}),
    ]
    for method, url, body in cases:
        e = _err(await a.client.request(method, url, json=body), 422, "validation_error")
        assert isinstance(e["details"], list) and e["details"], (method, url, body)
    e = _err(await a.client.post("/api/conversations", json={"title": "x" * 201}), 422)
    assert "too long" in e["message"] and e["details"][0]["loc"][-1] == "title"
    r = await a.client.post(
        "/api/conversations", content=b"{not json", headers={"content-type": "application/json"}
    )
    _err(r, 422, "validation_error")
    # a project or agent the caller does not own
    _err(await a.client.post("/api/conversations", json={"project_id": "p_nope"}), 404)
    _err(await a.client.post("/api/conversations", json={"agent_id": "ag_nope"}), 404)
    _err(await a.client.patch(f"/api/conversations/{cid}", json={"project_id": "p_nope"}), 404)
    await _unchanged(app, a, cid, snap)


async def test_message_bodies(world, app):
    a, cid, q, ans, stranger_msg = world
    snap = await _snapshot(app, a, cid)
    url = f"/api/conversations/{cid}/messages"
    cases = [
        {"content": "x", "generate": False, "mood": "happy"},
        {"content": 5, "generate": False},
        {"content": [], "generate": False},
        {"content": [{"kind": "hologram"}], "generate": False},
        {"content": [{"kind": "text"}], "generate": False},
        {"content": ["just a string in a list"], "generate": False},
        {"content": "x", "role": "system", "generate": False},
        {"content": "x", "generate": "sometimes"},
        {"content": "x", "generate": False, "parent_id": 7},
        {"content": "x", "generate": False, "metadata": "not an object"},
        {"generate": False},
    ]
    for body in cases:
        _err(await a.client.post(url, json=body), 422, "validation_error")
    for body in ({"content": "x", "extra": 1}, {"content": 1}, {}):
        _err(await a.client.patch(f"{url}/{q['id']}", json=body), 422, "validation_error")
    # parents that are not in this conversation
    for parent in (stranger_msg["id"], "msg_does_not_exist"):
        e = _err(
            await a.client.post(url, json={"content": "x", "generate": False, "parent_id": parent}),
            422,
            "invalid_parent",
        )
        assert e["details"] == {"parent_id": parent}
    await _unchanged(app, a, cid, snap)


async def test_content_over_the_limit_is_413(world, app):
    a, cid, q, ans, _ = world
    snap = await _snapshot(app, a, cid)
    url = f"/api/conversations/{cid}/messages"
    big = "x" * (LIMIT + 1)
    e = _err(
        await a.client.post(url, json={"content": big, "generate": False}), 413, "payload_too_large"
    )
    assert e["details"]["limit"] == LIMIT and e["details"]["size"] > LIMIT
    _err(await a.client.post(url, json={"content": big, "role": "assistant"}), 413)
    _err(
        await a.client.post(
            url, json={"content": [{"kind": "text", "text": "é" * 600}], "generate": False}
        ),
        413,
    )  # bytes, not characters
    _err(
        await a.client.post(
            url, json={"content": "ok", "generate": False, "metadata": {"blob": big}}
        ),
        413,
    )
    _err(await a.client.patch(f"{url}/{q['id']}", json={"content": big}), 413)
    await _unchanged(app, a, cid, snap)
    ok = await say(a.client, cid, "y" * (LIMIT - 100))  # under the limit is fine
    assert ok["text"] == "y" * (LIMIT - 100)


def _b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


async def test_bad_cursors_and_query_parameters(world, app):
    a, cid, q, ans, stranger_msg = world
    for cursor in (
        "!!!",
        "abc",
        _b64([1, 2]),
        _b64(["a", "b", "c"]),
        _b64([True, 1, "c"]),
        _b64([0, 10**30, "c"]),
        _b64({"a": 1}),
        _b64("x"),
        "%%%",
    ):
        e = _err(
            await a.client.get("/api/conversations", params={"cursor": cursor}),
            400,
            "invalid_cursor",
        )
        assert "cursor" in e["message"]
    for before in ("msg_nope", stranger_msg["id"]):
        _err(
            await a.client.get(f"/api/conversations/{cid}/messages", params={"before": before}),
            400,
            "invalid_cursor",
        )
    for params in ({"limit": 0}, {"limit": 201}, {"limit": "ten"}, {"mode": "graph"}):
        _err(await a.client.get(f"/api/conversations/{cid}/messages", params=params), 422)
    for params in ({"limit": 0}, {"archived": "sometimes"}):
        _err(await a.client.get("/api/conversations", params=params), 422)


async def test_streaming_rows_are_not_edited_deleted_or_forked(world, app):
    a, cid, q, ans, _ = world
    sid = new_id("msg")
    async with app.state.runtime.db.write() as c:
        await c.execute(
            insert(t.messages).values(
                id=sid,
                conversation_id=cid,
                parent_id=q["id"],
                role="assistant",
                status="streaming",
                blocks=[{"kind": "text", "text": "partial"}],
                created_at=ans["created_at"] + 1,
                user_id=a.id,
                depth=1,
            )
        )
        # a live generation lease, so the sweeper leaves the turn streaming
        await c.execute(
            insert(t.conversation_generation_leases).values(
                conversation_id=cid,
                branch_key=q["id"],
                principal_id=a.id,
                owner_token=f"{sid}:test",
                expires_at=now_ms() + 600_000,
            )
        )
    snap = await _snapshot(app, a, cid)
    url = f"/api/conversations/{cid}"
    _err(
        await a.client.patch(f"{url}/messages/{sid}", json={"content": "x"}),
        409,
        "message_streaming",
    )
    _err(await a.client.delete(f"{url}/messages/{q['id']}"), 409, "message_streaming")
    await a.client.patch(f"{url}/active-leaf", json={"leaf_id": sid})
    snap = await _snapshot(app, a, cid)
    _err(await a.client.post(f"{url}/fork", json={}), 409, "message_streaming")
    await _unchanged(app, a, cid, snap)


async def test_not_owned_edit_and_delete_are_404(world, new_user, app):
    a, cid, q, ans, _ = world
    b = await new_user()
    snap = await _snapshot(app, a, cid)
    _err(
        await b.client.patch(f"/api/conversations/{cid}/messages/{q['id']}", json={"content": "x"}),
        404,
        "not_found",
    )
    _err(await b.client.delete(f"/api/conversations/{cid}/messages/{q['id']}"), 404, "not_found")
    _err(await b.client.delete(f"/api/conversations/{cid}"), 404, "not_found")
    _err(await b.client.patch(f"/api/conversations/{cid}", json={"title": "x"}), 404, "not_found")
    await _unchanged(app, a, cid, snap)


async def test_empty_reference_ids_are_rejected_not_a_server_error(app, new_user):
    """Found by schemathesis: "" as a project/agent id reached the foreign key (500)."""
    a = await new_user()
    for body in ({"project_id": ""}, {"agent_id": ""}, {"model": ""}):
        r = await a.client.post("/api/conversations", json=body)
        assert r.status_code == 422, (body, r.text)
    r = await a.client.post("/api/me/memories", json={"memory_text": "x", "agent_id": ""})
    assert r.status_code == 422, r.text
    assert (await a.client.get("/api/conversations")).json()["items"] == []


async def test_nul_characters_are_refused_everywhere(app, new_user):
    """Found by schemathesis on PostgreSQL: NUL in a body or a URL was a 500 (PG text cannot
    hold NUL) — now a clear 4xx on both databases, with nothing written."""
    a = await new_user()
    r = await a.client.post(
        "/api/agents", json={"name": "A", "handle": "a", "default_prompt": "x\x00y"}
    )
    assert r.status_code == 422 and "NUL" in r.text
    r = await a.client.post("/api/conversations", json={"title": "t\x00"})
    assert r.status_code == 422
    r = await a.client.get("/api/conversations", params={"agent_id": "\x00"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"
    r = await a.client.get("/api/conversations/%00")
    assert r.status_code == 400
    r = await a.client.get("/rpc/chat/inbox/x/messages", params={"cursor": "\x00"})
    assert r.status_code == 400 and r.json()["ok"] is False
    r = await a.client.post(
        "/rpc/chat/inbox",
        json={
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi\x00"}]}],
            "conversation": {"id": "x"},
        },
    )
    assert r.status_code == 400 and r.json()["ok"] is False
    assert (await a.client.get("/api/agents")).json()["items"] == []
    assert (await a.client.get("/api/conversations")).json()["items"] == []


async def test_null_for_a_required_agent_field_leaves_it_unchanged(app, new_user):
    """Found by schemathesis: ``PATCH /api/agents/{id}`` with null for a NOT NULL text field was a
    500. Null now leaves such a field as it was; the nullable ones are cleared by it."""
    a = await new_user()
    agent = (
        await a.client.post(
            "/api/agents", json={"name": "A", "handle": "a", "headline": "h", "image_key": "k"}
        )
    ).json()
    for field in ("headline", "description", "tone_prompt", "name", "status"):
        r = await a.client.patch(f"/api/agents/{agent['id']}", json={field: None})
        assert r.status_code == 200, (field, r.text)
    r = await a.client.patch(
        f"/api/agents/{agent['id']}", json={"image_key": None, "opening_message": None}
    )
    got = r.json()
    assert r.status_code == 200 and got["headline"] == "h" and got["name"] == "A"
    assert got["image_key"] is None and got["opening_message"] is None


async def test_memory_validity_beyond_64_bits_is_a_422(app, new_user):
    """Found by schemathesis: ``valid_from``/``valid_until`` ≥ 2^63 overflowed the column (500).
    The bound is 2^53 - 1: the schema's ``maximum`` must be exact in a JSON reader's doubles (a
    fuzzer sent 2^63 + 192, which a double rounds to 2^63 - 1 and calls valid)."""
    a = await new_user()
    for field in ("valid_from", "valid_until"):
        for big in (2**53, 2**63, 2**63 + 192):
            r = await a.client.post("/api/me/memories", json={"memory_text": "x", field: big})
            _err(r, 422, "validation_error")
    r = await a.client.post("/api/me/memories", json={"memory_text": "x", "valid_from": 2**53 - 1})
    assert r.status_code == 201, r.text


async def test_booleans_are_strict(app, new_user):
    """Found by schemathesis: fields declared ``boolean`` took ``0``, ``1`` and ``"yes"`` (pydantic's
    lax mode); now only ``true``/``false`` (and ``null`` where the field is nullable), nothing
    written."""
    a = await new_user()
    cid = (await a.client.post("/api/conversations", json={"title": "t"})).json()["id"]
    pid = (await a.client.post("/api/projects", json={"name": "P"})).json()["id"]
    for bad in (0, 1, "yes", "true", "off"):
        for method, url, body in (
            ("PATCH", f"/api/conversations/{cid}", {"is_public": bad}),
            ("PATCH", f"/api/conversations/{cid}", {"pinned": bad}),
            ("POST", "/api/conversations", {"starred": bad}),
            ("PATCH", f"/api/projects/{pid}", {"is_public": bad}),
            ("POST", "/api/projects", {"name": "Q", "is_public": bad}),
            ("PATCH", "/api/me", {"memory_enabled": bad}),
            ("POST", f"/api/conversations/{cid}/messages", {"content": "hi", "generate": bad}),
        ):
            r = await a.client.request(method, url, json=body)
            _err(r, 422, "validation_error")
    assert len((await a.client.get("/api/conversations")).json()["items"]) == 1
    assert len((await a.client.get("/api/projects")).json()["items"]) == 1
    conv = (await a.client.get(f"/api/conversations/{cid}")).json()
    assert conv["pinned"] is False and conv["message_count"] == 0
    r = await a.client.patch(f"/api/conversations/{cid}", json={"pinned": True, "starred": None})
    assert r.status_code == 200 and r.json()["pinned"] is True

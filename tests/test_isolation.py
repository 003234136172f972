"""Isolation: another user's conversation or message id answers 404, reveals nothing, writes nothing.

Every conversation and message route is called by a stranger with the owner's ids (and with the
stranger's own conversation combined with the owner's message ids); a sweep over every other
route under ``/api/conversations/{cid}`` (except SSE streams) checks no success and no leak.
"""

from __future__ import annotations

import pytest

from .conftest import make_settings
from .tree_api import conv, new_conv, path, say, table_counts


@pytest.fixture
def settings(db_url):
    # no job worker: background jobs would change row counts between the before/after snapshots
    return make_settings(db_url, run_worker=False)


SECRET = "owner-secret-text"


async def _owner_world(new_user):
    a = await new_user()
    b = await new_user()
    c = await new_conv(a.client, title=f"title {SECRET}")
    q = await say(a.client, c["id"], f"q {SECRET}")
    ans = await say(a.client, c["id"], f"a {SECRET}", role="assistant")
    mine = await new_conv(b.client, title="stranger's own")
    own_msg = await say(b.client, mine["id"], "hello")
    return a, b, c, q, ans, mine, own_msg


def _assert_404(r, *leaks):
    assert r.status_code == 404, (r.request.method, r.request.url, r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error", "request_id"} and body["error"]["code"] == "not_found"
    assert set(body["error"]) == {"code", "message", "details"}
    for leak in (SECRET, *leaks):
        assert leak not in r.text


async def test_foreign_conversation_and_message_ids_are_404(new_user, app):
    a, b, c, q, ans, mine, own_msg = await _owner_world(new_user)
    cid, mid = c["id"], ans["id"]
    before = await table_counts(app)
    owner_view = await conv(a.client, cid)
    base = f"/api/conversations/{cid}"
    calls = [
        ("GET", base, None),
        ("PATCH", base, {"title": "hijacked"}),
        ("DELETE", base, None),
        ("GET", f"{base}/messages", None),
        ("GET", f"{base}/messages?mode=tree", None),
        ("GET", f"{base}/messages?before={mid}", None),
        ("POST", f"{base}/messages", {"content": "intruder", "generate": False}),
        ("POST", f"{base}/messages", {"content": "intruder", "role": "assistant"}),
        ("POST", f"{base}/messages", {"content": "x", "generate": False, "parent_id": q["id"]}),
        ("GET", f"{base}/messages/{mid}", None),
        ("PATCH", f"{base}/messages/{mid}", {"content": "defaced"}),
        ("DELETE", f"{base}/messages/{mid}", None),
        ("PATCH", f"{base}/active-leaf", {"leaf_id": q["id"]}),
        ("POST", f"{base}/fork", {}),
        ("POST", f"{base}/fork", {"message_id": q["id"]}),
        # the stranger's own conversation with the owner's message ids
        ("GET", f"/api/conversations/{mine['id']}/messages/{mid}", None),
        ("PATCH", f"/api/conversations/{mine['id']}/messages/{mid}", {"content": "defaced"}),
        ("DELETE", f"/api/conversations/{mine['id']}/messages/{mid}", None),
        ("PATCH", f"/api/conversations/{mine['id']}/active-leaf", {"leaf_id": mid}),
        ("POST", f"/api/conversations/{mine['id']}/fork", {"message_id": mid}),
        # a conversation id that does not exist at all answers the same way
        ("GET", "/api/conversations/c_does_not_exist", None),
        ("GET", f"/api/conversations/{mine['id']}/messages/msg_nope", None),
    ]
    for method, url, body in calls:
        r = await b.client.request(method, url, json=body)
        _assert_404(r, cid, mid, q["id"])
    assert await table_counts(app) == before
    assert await conv(a.client, cid) == owner_view
    assert [m["text"] for m in await path(a.client, cid)] == [f"q {SECRET}", f"a {SECRET}"]
    r = await b.client.get("/api/conversations")
    assert [x["id"] for x in r.json()["items"]] == [mine["id"]]


async def test_foreign_ids_inside_bodies_and_queries(new_user, app):
    a, b, c, q, ans, mine, own_msg = await _owner_world(new_user)
    before = await table_counts(app)
    # a foreign parent is just "not in this conversation": 422, same as a missing one
    r = await b.client.post(
        f"/api/conversations/{mine['id']}/messages",
        json={"content": "x", "generate": False, "parent_id": ans["id"]},
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_parent"
    assert SECRET not in r.text
    # paging before a foreign message is a bad cursor, not a peek
    r = await b.client.get(
        f"/api/conversations/{mine['id']}/messages", params={"before": ans["id"]}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_cursor"
    assert SECRET not in r.text
    # filters with foreign ids find nothing
    r = await b.client.get("/api/conversations", params={"project_id": "p_x", "agent_id": "ag_x"})
    assert r.json()["items"] == []
    assert await table_counts(app) == before


async def test_other_conversation_routes_do_not_leak(new_user, app):
    """Routes other features add under /api/conversations/{cid} never succeed for a stranger."""
    a, b, c, q, ans, mine, own_msg = await _owner_world(new_user)
    before = await table_counts(app)
    checked = 0
    for p, ops in app.openapi()["paths"].items():
        if not p.startswith("/api/conversations/{cid}") or "stream" in p:
            continue
        url = p.replace("{cid}", c["id"]).replace("{mid}", ans["id"])
        for method in sorted(m.upper() for m in ops):
            body = None if method in ("GET", "DELETE") else {}
            r = await b.client.request(method, url, json=body)
            assert r.status_code >= 400, (method, url, r.status_code, r.text)
            assert SECRET not in r.text and ans["id"] not in r.text, (method, url)
            checked += 1
    assert checked >= 10
    assert await table_counts(app) == before

"""Workspaces (issue 16, part 1): CRUD, roles, invitations by email and by link, leave / remove /
transfer, and deleting a workspace with its rows, on both databases."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from chatmem.db import schema as t

from .conftest import make_settings


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, run_worker=False)


async def _ws(client, name="Team") -> dict:
    r = await client.post("/api/workspaces", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()


async def _invite(client, wid, **body) -> dict:
    r = await client.post(f"/api/workspaces/{wid}/invites", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def _join(owner, user, wid, role="member") -> None:
    inv = await _invite(owner.client, wid, role=role)
    r = await user.client.post("/api/workspace-invites/join", json={"token": inv["token"]})
    assert r.status_code == 200, r.text


async def test_crud_and_roles(new_user):
    a, b = await new_user(), await new_user()
    ws = await _ws(a.client, "  Team A  ")
    assert ws["name"] == "Team A" and ws["role"] == "owner" and ws["owner_id"] == a.id
    assert ws["member_count"] == 1
    wid = ws["id"]
    # a stranger sees nothing of it
    for method, url in [
        ("GET", f"/api/workspaces/{wid}"),
        ("PATCH", f"/api/workspaces/{wid}"),
        ("DELETE", f"/api/workspaces/{wid}"),
        ("GET", f"/api/workspaces/{wid}/members"),
        ("POST", f"/api/workspaces/{wid}/invites"),
        ("GET", f"/api/workspaces/{wid}/invites"),
        ("POST", f"/api/workspaces/{wid}/transfer"),
    ]:
        body = (
            {"name": "x"} if method == "PATCH" else {"user_id": b.id} if "transfer" in url else {}
        )
        r = await b.client.request(method, url, json=None if method in ("GET", "DELETE") else body)
        assert r.status_code == 404, (method, url, r.text)
        assert "Team A" not in r.text
    assert (await b.client.get("/api/workspaces")).json()["items"] == []
    # b joins as a member: sees it, cannot manage it
    await _join(a, b, wid)
    items = (await b.client.get("/api/workspaces")).json()["items"]
    assert [(w["id"], w["role"], w["member_count"]) for w in items] == [(wid, "member", 2)]
    r = await b.client.patch(f"/api/workspaces/{wid}", json={"name": "mine now"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "workspace_role"
    assert (await b.client.delete(f"/api/workspaces/{wid}")).status_code == 403
    assert (await b.client.post(f"/api/workspaces/{wid}/invites", json={})).status_code == 403
    # the owner makes b an admin: b renames and invites, still cannot delete or change roles
    r = await a.client.patch(f"/api/workspaces/{wid}/members/{b.id}", json={"role": "admin"})
    assert r.status_code == 200 and r.json()["role"] == "admin"
    r = await b.client.patch(f"/api/workspaces/{wid}", json={"name": "Team B"})
    assert r.status_code == 200 and r.json()["name"] == "Team B"
    assert (await b.client.delete(f"/api/workspaces/{wid}")).status_code == 403
    r = await b.client.patch(f"/api/workspaces/{wid}/members/{a.id}", json={"role": "member"})
    assert r.status_code == 403
    r = await a.client.patch(f"/api/workspaces/{wid}/members/{a.id}", json={"role": "member"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "owner_role"
    r = await a.client.patch(f"/api/workspaces/{wid}/members/{b.id}", json={"role": "owner"})
    assert r.status_code == 422
    r = await a.client.post("/api/workspaces", json={"name": "   "})
    assert r.status_code == 422


async def test_email_invites(new_user):
    a, b, c = await new_user(), await new_user(), await new_user()
    wid = (await _ws(a.client))["id"]
    inv = await _invite(a.client, wid, email=b.email.upper(), role="admin")
    assert inv["email"] == b.email and inv["token"]
    listed = (await a.client.get(f"/api/workspaces/{wid}/invites")).json()["items"]
    assert [i["id"] for i in listed] == [inv["id"]] and listed[0]["token"] is None
    # only b sees and can accept it; c cannot, not even with the token
    assert (await c.client.get("/api/workspace-invites")).json()["items"] == []
    assert (await c.client.post(f"/api/workspace-invites/{inv['id']}/accept")).status_code == 404
    r = await c.client.post("/api/workspace-invites/join", json={"token": inv["token"]})
    assert r.status_code == 404
    mine = (await b.client.get("/api/workspace-invites")).json()["items"]
    assert [(i["id"], i["workspace_name"], i["role"]) for i in mine] == [
        (inv["id"], "Team", "admin")
    ]
    r = await b.client.post(f"/api/workspace-invites/{inv['id']}/accept")
    assert r.status_code == 200 and r.json()["role"] == "admin"
    # consumed: once
    assert (await b.client.post(f"/api/workspace-invites/{inv['id']}/accept")).status_code == 404
    assert (await b.client.get("/api/workspace-invites")).json()["items"] == []
    # declining and revoking
    inv2 = await _invite(a.client, wid, email=c.email)
    assert (await c.client.delete(f"/api/workspace-invites/{inv2['id']}")).status_code == 204
    assert (await c.client.post(f"/api/workspace-invites/{inv2['id']}/accept")).status_code == 404
    inv3 = await _invite(a.client, wid, email=c.email)
    r = await a.client.delete(f"/api/workspaces/{wid}/invites/{inv3['id']}")
    assert r.status_code == 204
    assert (await c.client.get("/api/workspace-invites")).json()["items"] == []
    r = await a.client.post(f"/api/workspaces/{wid}/invites", json={"email": "not-an-email"})
    assert r.status_code == 422


async def test_link_invite_is_one_time(new_user):
    a, b, c = await new_user(), await new_user(), await new_user()
    wid = (await _ws(a.client))["id"]
    inv = await _invite(a.client, wid)
    assert inv["email"] == ""
    r = await b.client.post("/api/workspace-invites/join", json={"token": inv["token"]})
    assert r.status_code == 200 and r.json()["role"] == "member"
    r = await c.client.post("/api/workspace-invites/join", json={"token": inv["token"]})
    assert r.status_code == 404
    r = await c.client.post("/api/workspace-invites/join", json={"token": "guess"})
    assert r.status_code == 404
    # a member joining again is a conflict and leaves the link unused
    inv2 = await _invite(a.client, wid)
    r = await b.client.post("/api/workspace-invites/join", json={"token": inv2["token"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "already_member"
    r = await c.client.post("/api/workspace-invites/join", json={"token": inv2["token"]})
    assert r.status_code == 200


async def test_leave_remove_transfer(new_user):
    a, b, c, d = [await new_user() for _ in range(4)]
    wid = (await _ws(a.client))["id"]
    await _join(a, b, wid, role="admin")
    await _join(a, c, wid)
    await _join(a, d, wid)
    # the owner cannot leave
    r = await a.client.delete(f"/api/workspaces/{wid}/members/{a.id}")
    assert r.status_code == 409 and r.json()["error"]["code"] == "owner_cannot_leave"
    # a member cannot remove another; an admin removes a member, not the owner
    assert (await c.client.delete(f"/api/workspaces/{wid}/members/{d.id}")).status_code == 403
    assert (await b.client.delete(f"/api/workspaces/{wid}/members/{d.id}")).status_code == 204
    assert (await b.client.delete(f"/api/workspaces/{wid}/members/{a.id}")).status_code == 409
    assert (await d.client.get(f"/api/workspaces/{wid}")).status_code == 404
    # a member leaves
    assert (await c.client.delete(f"/api/workspaces/{wid}/members/{c.id}")).status_code == 204
    assert (await c.client.get(f"/api/workspaces/{wid}")).status_code == 404
    assert (await a.client.delete(f"/api/workspaces/{wid}/members/{c.id}")).status_code == 404
    # transfer to b: b owns, a is an admin and may now leave
    assert (
        await b.client.post(f"/api/workspaces/{wid}/transfer", json={"user_id": a.id})
    ).status_code == 403
    r = await a.client.post(f"/api/workspaces/{wid}/transfer", json={"user_id": c.id})
    assert r.status_code == 404
    r = await a.client.post(f"/api/workspaces/{wid}/transfer", json={"user_id": b.id})
    assert r.status_code == 200 and r.json()["role"] == "admin" and r.json()["owner_id"] == b.id
    roles = {
        m["user_id"]: m["role"]
        for m in (await a.client.get(f"/api/workspaces/{wid}/members")).json()["items"]
    }
    assert roles == {a.id: "admin", b.id: "owner"}
    assert (await a.client.delete(f"/api/workspaces/{wid}/members/{a.id}")).status_code == 204
    assert (await b.client.get(f"/api/workspaces/{wid}")).json()["member_count"] == 1


async def _count(app, table, **where) -> int:
    tbl = t.metadata.tables[table]
    q = select(func.count()).select_from(tbl)
    for k, v in where.items():
        q = q.where(tbl.c[k] == v)
    async with app.state.runtime.db.read() as c:
        return (await c.execute(q)).scalar_one()


async def test_delete_workspace_deletes_its_rows(new_user, app):
    a, b = await new_user(), await new_user()
    wid = (await _ws(a.client))["id"]
    await _join(a, b, wid)
    await _invite(a.client, wid, email="later@example.com")
    personal = (await a.client.post("/api/conversations", json={"title": "mine"})).json()
    r = await a.client.post("/api/projects", json={"name": "P", "workspace_id": wid})
    assert r.status_code == 201, r.text
    r = await b.client.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    r = await b.client.post(
        f"/api/conversations/{cid}/messages", json={"content": "hi", "generate": False}
    )
    assert r.status_code == 201, r.text
    mid = r.json()["id"]
    r = await a.client.post(f"/api/conversations/{cid}/share")
    assert r.status_code == 201, r.text
    assert (await a.client.delete(f"/api/workspaces/{wid}")).status_code == 204
    for table in ("workspaces", "workspace_invites"):
        assert await _count(app, table) == 0
    assert await _count(app, "workspace_members", workspace_id=wid) == 0
    assert await _count(app, "projects", workspace_id=wid) == 0
    assert await _count(app, "conversations", workspace_id=wid) == 0
    assert await _count(app, "messages", id=mid) == 0
    assert await _count(app, "conversation_shares") == 0
    assert (await a.client.get(f"/api/conversations/{personal['id']}")).status_code == 200
    assert (await b.client.get("/api/workspaces")).json()["items"] == []


async def _team(new_user):
    """owner o, admin d, members m and n, stranger s — in one workspace."""
    o, d, m, n, s = [await new_user() for _ in range(5)]
    wid = (await _ws(o.client))["id"]
    await _join(o, d, wid, role="admin")
    await _join(o, m, wid)
    await _join(o, n, wid)
    return wid, o, d, m, n, s


async def _ids(client, url, **params) -> list[str]:
    r = await client.get(url, params=params)
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["items"]]


async def test_visibility_of_workspace_rows(new_user):
    wid, o, d, m, n, s = await _team(new_user)
    post = m.client.post
    pub = (await post("/api/conversations", json={"workspace_id": wid, "is_public": True})).json()
    priv = (await post("/api/conversations", json={"workspace_id": wid})).json()
    assert priv["is_public"] is False and priv["workspace_id"] == wid
    personal = (await post("/api/conversations", json={})).json()
    # listing: personal space never shows workspace rows, the workspace shows what one may see
    assert await _ids(m.client, "/api/conversations") == [personal["id"]]
    assert set(await _ids(m.client, "/api/conversations", workspace_id=wid)) == {
        pub["id"],
        priv["id"],
    }
    assert await _ids(n.client, "/api/conversations", workspace_id=wid) == [pub["id"]]
    assert set(await _ids(d.client, "/api/conversations", workspace_id=wid)) == {
        pub["id"],
        priv["id"],
    }
    r = await s.client.get("/api/conversations", params={"workspace_id": wid})
    assert r.status_code == 404
    # reading one
    for who, cid, ok in [
        (n, pub["id"], True),
        (n, priv["id"], False),
        (d, priv["id"], True),
        (o, priv["id"], True),
        (s, pub["id"], False),
        (n, personal["id"], False),
    ]:
        r = await who.client.get(f"/api/conversations/{cid}")
        assert r.status_code == (200 if ok else 404), (cid, r.text)
    # managing: the creator and admins; a member who sees it may not rename or delete it
    r = await n.client.patch(f"/api/conversations/{pub['id']}", json={"title": "mine"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "workspace_role"
    assert (await n.client.delete(f"/api/conversations/{pub['id']}")).status_code == 403
    r = await d.client.patch(f"/api/conversations/{priv['id']}", json={"is_public": True})
    assert r.status_code == 200 and r.json()["is_public"] is True
    assert await _ids(n.client, "/api/conversations", workspace_id=wid) == [priv["id"], pub["id"]]
    # no archive view for workspace rows
    r = await m.client.patch(f"/api/conversations/{pub['id']}", json={"archived": True})
    assert r.status_code == 422 and r.json()["error"]["code"] == "no_workspace_archive"
    # a member who leaves loses access even to what they created
    assert (await m.client.delete(f"/api/workspaces/{wid}/members/{m.id}")).status_code == 204
    assert (await m.client.get(f"/api/conversations/{pub['id']}")).status_code == 404
    assert (await o.client.get(f"/api/conversations/{pub['id']}")).status_code == 200


async def test_workspace_projects(new_user):
    wid, o, d, m, n, s = await _team(new_user)
    mk = m.client.post
    r = await mk("/api/projects", json={"name": "Plan", "workspace_id": wid, "is_public": False})
    assert r.status_code == 201, r.text
    priv = r.json()
    pub = (await mk("/api/projects", json={"name": "Shared", "workspace_id": wid})).json()
    # the same name in personal space and for another member is fine; for m again it is not
    assert (await mk("/api/projects", json={"name": "Plan"})).status_code == 201
    r = await n.client.post("/api/projects", json={"name": "plan", "workspace_id": wid})
    assert r.status_code == 201
    r = await mk("/api/projects", json={"name": "  PLAN ", "workspace_id": wid})
    assert r.status_code == 409 and r.json()["error"]["code"] == "duplicate_name"
    assert (
        await s.client.post("/api/projects", json={"name": "x", "workspace_id": wid})
    ).status_code == 404
    # visibility
    assert priv["id"] not in await _ids(n.client, "/api/projects", workspace_id=wid)
    assert priv["id"] in await _ids(d.client, "/api/projects", workspace_id=wid)
    assert (await n.client.get(f"/api/projects/{priv['id']}")).status_code == 404
    assert (await n.client.get(f"/api/projects/{pub['id']}")).status_code == 200
    assert (
        await n.client.patch(f"/api/projects/{pub['id']}", json={"name": "z"})
    ).status_code == 403
    assert (
        await d.client.patch(f"/api/projects/{pub['id']}", json={"emoji": "x"})
    ).status_code == 200
    assert (await s.client.get("/api/projects", params={"workspace_id": wid})).status_code == 404
    assert pub["id"] not in await _ids(m.client, "/api/projects")
    # conversations in a project: same space only
    r = await n.client.post(
        "/api/conversations", json={"workspace_id": wid, "project_id": pub["id"]}
    )
    assert r.status_code == 201
    r = await n.client.post("/api/conversations", json={"project_id": pub["id"]})
    assert r.status_code == 422 and r.json()["error"]["code"] == "project_space_mismatch"
    r = await n.client.post(
        "/api/conversations", json={"workspace_id": wid, "project_id": priv["id"]}
    )
    assert r.status_code == 404


async def test_workspace_ratings_and_reports(new_user):
    wid, o, d, m, n, s = await _team(new_user)
    cid = (
        await m.client.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
    ).json()["id"]
    url = f"/api/conversations/{cid}/messages"
    await m.client.post(url, json={"content": "q", "generate": False})
    r = await m.client.post(url, json={"content": "a", "role": "assistant"})
    aid = r.json()["id"]
    r = await n.client.post(f"{url}/{aid}/feedback", json={"feedback": "like"})
    assert r.status_code == 200, r.text
    # owner and admins see the workspace's ratings; a member 403, a stranger 404
    for who in (o, d):
        r = await who.client.get(f"/api/workspaces/{wid}/feedback")
        assert r.status_code == 200, r.text
        [item] = r.json()["items"]
        assert item["user_id"] == n.id and item["message_id"] == aid and item["rating"] == "like"
    r = await m.client.get(f"/api/workspaces/{wid}/feedback")
    assert r.status_code == 403
    assert (await s.client.get(f"/api/workspaces/{wid}/feedback")).status_code == 404
    # a problem report from a member carries the workspace; a stranger cannot attach it
    form = {"description": "broken", "message_id": aid}
    r = await n.client.post("/api/user-feedback", data=form)
    assert r.status_code == 201, r.text
    assert r.json()["workspace_id"] == wid and r.json()["conversation_id"] == cid
    assert (await s.client.post("/api/user-feedback", data=form)).status_code == 404


async def test_an_owner_leaving_the_service_hands_the_workspace_over(new_user, app):
    """Deleting the owner's account: a workspace with other members passes to its admin (before
    an older plain member) with every row of the others kept; one nobody else is in goes with
    its rows, including a conversation of a member who had left."""
    a, b, c = await new_user(), await new_user(), await new_user()
    team = (await _ws(a.client, "Team"))["id"]
    await _join(a, c, team)  # c joined first, as a plain member
    await _join(a, b, team, role="admin")
    r = await c.client.post("/api/conversations", json={"title": "c's", "workspace_id": team})
    assert r.status_code == 201, r.text
    kept = r.json()["id"]
    solo = (await _ws(a.client, "Solo"))["id"]
    await _join(a, b, solo)
    r = await b.client.post("/api/conversations", json={"title": "b's", "workspace_id": solo})
    gone = r.json()["id"]
    assert (await b.client.delete(f"/api/workspaces/{solo}/members/{b.id}")).status_code == 204
    r = await a.client.request("DELETE", "/api/account", json={"confirm": a.email})
    assert r.status_code == 200, r.text
    ws = (await b.client.get(f"/api/workspaces/{team}")).json()
    assert ws["owner_id"] == b.id and ws["role"] == "owner" and ws["member_count"] == 2
    assert (await c.client.get(f"/api/conversations/{kept}")).status_code == 200
    assert (await b.client.get(f"/api/workspaces/{solo}")).status_code == 404
    async with app.state.runtime.db.read() as conn:
        left = await conn.execute(
            select(func.count()).select_from(t.conversations).where(t.conversations.c.id == gone)
        )
        assert left.scalar() == 0

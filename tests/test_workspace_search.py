"""Search inside a workspace (issue 16, item 2) on both databases: scoped to a workspace, search
shows a member exactly what they may see there (public rows, their own private ones; owners and
admins every row) — whoever wrote the message — and never a personal row or another workspace's;
personal search stays personal; a non-member's workspace is a 404."""

from __future__ import annotations

from .tree_api import say


async def _join(owner, user, wid, role="member"):
    r = await owner.client.post(f"/api/workspaces/{wid}/invites", json={"role": role})
    r = await user.client.post("/api/workspace-invites/join", json={"token": r.json()["token"]})
    assert r.status_code == 200, r.text


async def _conv(user, title, **kw) -> str:
    r = await user.client.post("/api/conversations", json={"title": title, **kw})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def _search(user, q, wid=None):
    params = {"q": q} if wid is None else {"q": q, "workspace_id": wid}
    return await user.client.get("/api/search", params=params)


def _found(r) -> tuple[set[str], set[str]]:
    assert r.status_code == 200, r.text
    body = r.json()
    return {c["id"] for c in body["conversations"]}, {m["id"] for m in body["messages"]}


async def test_workspace_search_follows_visibility(new_user, app):
    o, d, m, n, s = [await new_user() for _ in range(5)]
    wid = (await o.client.post("/api/workspaces", json={"name": "Team"})).json()["id"]
    await _join(o, d, wid, "admin")
    await _join(o, m, wid)
    await _join(o, n, wid)
    other = (await s.client.post("/api/workspaces", json={"name": "Other"})).json()["id"]
    await _join(s, m, other)
    pub = await _conv(m, "zebra public", workspace_id=wid, is_public=True)
    priv = await _conv(m, "zebra private", workspace_id=wid)
    mine = await _conv(m, "zebra personal")
    elsewhere = await _conv(s, "zebra elsewhere", workspace_id=other, is_public=True)
    p1 = (await say(m.client, pub, "the zebra crossing plan"))["id"]
    p2 = (await say(n.client, pub, "zebra stripes from n"))["id"]  # n speaks in m's conversation
    x1 = (await say(m.client, priv, "zebra secret plan"))["id"]
    y1 = (await say(m.client, mine, "my own zebra notes"))["id"]
    z1 = (await say(s.client, elsewhere, "zebra in the other team"))["id"]

    assert _found(await _search(n, "zebra", wid)) == ({pub}, {p1, p2})
    assert _found(await _search(m, "zebra", wid)) == ({pub, priv}, {p1, p2, x1})
    for admin in (o, d):
        assert _found(await _search(admin, "zebra", wid)) == ({pub, priv}, {p1, p2, x1})
    assert _found(await _search(m, "zebra", other)) == ({elsewhere}, {z1})
    # prefix while typing, and a word only in the private conversation
    assert _found(await _search(n, "zeb", wid))[1] == {p1, p2}
    assert _found(await _search(n, "secret", wid)) == (set(), set())
    # personal search stays personal: no workspace row, even one's own
    assert _found(await _search(m, "zebra")) == ({mine}, {y1})
    assert _found(await _search(n, "zebra")) == (set(), set())
    assert _found(await _search(o, "zebra")) == (set(), set())
    # a non-member gets 404 (and nothing of the workspace); an unknown workspace too
    for who, ws in ((s, wid), (n, other), (n, "ws_nope")):
        r = await _search(who, "zebra", ws)
        assert r.status_code == 404 and "zebra" not in r.text
    # a member who leaves no longer finds anything there
    assert (await n.client.delete(f"/api/workspaces/{wid}/members/{n.id}")).status_code == 204
    assert (await _search(n, "zebra", wid)).status_code == 404

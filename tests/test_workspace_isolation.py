"""Isolation extended to workspaces (issue 16, item 6).

One workspace with an owner, an admin, a member who created a private and a public conversation
and a private project, another member (no access to the private rows) and a stranger. Every
workspace route, and every route under ``/api/conversations/{cid}`` and ``/api/projects/{id}``
(read from the OpenAPI document, so routes added later are swept too), is called by each of them
on both databases: each sees exactly what the rules allow, 404 otherwise, and a refused call
writes nothing and leaks nothing.
"""

from __future__ import annotations

import pytest

from .conftest import make_settings
from .tree_api import say, table_counts

SECRET = "private-secret-text"


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, run_worker=False)


async def _join(owner, user, wid, role="member"):
    r = await owner.client.post(f"/api/workspaces/{wid}/invites", json={"role": role})
    r = await user.client.post("/api/workspace-invites/join", json={"token": r.json()["token"]})
    assert r.status_code == 200, r.text


async def _world(new_user):
    o, d, m, n, s = [await new_user() for _ in range(5)]
    wid = (await o.client.post("/api/workspaces", json={"name": "Team"})).json()["id"]
    await _join(o, d, wid, role="admin")
    await _join(o, m, wid)
    await _join(o, n, wid)
    post = m.client.post
    proj = (
        await post(
            "/api/projects",
            json={"name": f"proj {SECRET}", "workspace_id": wid, "is_public": False},
        )
    ).json()
    priv = (
        await post("/api/conversations", json={"workspace_id": wid, "title": f"t {SECRET}"})
    ).json()
    q = await say(m.client, priv["id"], f"q {SECRET}")
    ans = await say(m.client, priv["id"], f"a {SECRET}", role="assistant")
    pub = (await post("/api/conversations", json={"workspace_id": wid, "is_public": True})).json()
    pq = await say(m.client, pub["id"], "public question")
    return dict(
        o=o, d=d, m=m, n=n, s=s, wid=wid, proj=proj, priv=priv, q=q, ans=ans, pub=pub, pq=pq
    )


def _404(r, *leaks):
    assert r.status_code == 404, (r.request.method, r.request.url, r.status_code, r.text)
    assert r.json()["error"]["code"] == "not_found"
    for leak in (SECRET, *leaks):
        assert leak not in r.text, (r.request.method, r.request.url)


def _sweep_urls(app, prefix: str, subs: dict[str, str]):
    for p, ops in app.openapi()["paths"].items():
        if not p.startswith(prefix) or "stream" in p:
            continue
        url = p
        for k, v in subs.items():
            url = url.replace("{" + k + "}", v)
        if "{" in url:
            continue
        for method in sorted(m.upper() for m in ops):
            yield method, url


async def test_private_rows_are_404_for_other_members_and_strangers(new_user, app):
    w = await _world(new_user)
    before = await table_counts(app)
    subs = {
        "cid": w["priv"]["id"],
        "mid": w["ans"]["id"],
        "obj_id": w["proj"]["id"],
        "tid": w["priv"]["id"],
    }
    checked = 0
    for who in ("n", "s"):
        client = w[who].client
        for prefix in ("/api/conversations/{cid}", "/api/projects/{obj_id}"):
            for method, url in _sweep_urls(app, prefix, subs):
                body = None if method in ("GET", "DELETE") else {}
                r = await client.request(method, url, json=body)
                assert r.status_code >= 400, (who, method, url, r.status_code, r.text)
                assert r.status_code != 403, (who, method, url)  # 403 would confirm it exists
                assert SECRET not in r.text and w["ans"]["id"] not in r.text, (who, method, url)
                checked += 1
        # the explicit core set answers exactly 404
        base = f"/api/conversations/{w['priv']['id']}"
        for method, url, body in [
            ("GET", base, None),
            ("PATCH", base, {"title": "hijacked"}),
            ("DELETE", base, None),
            ("GET", f"{base}/messages", None),
            ("POST", f"{base}/messages", {"content": "intruder", "generate": False}),
            ("GET", f"{base}/messages/{w['ans']['id']}", None),
            ("PATCH", f"{base}/messages/{w['ans']['id']}", {"content": "defaced"}),
            ("DELETE", f"{base}/messages/{w['ans']['id']}", None),
            ("POST", f"{base}/stop", {}),
            ("POST", f"{base}/share", None),
            ("GET", f"/api/projects/{w['proj']['id']}", None),
            ("PATCH", f"/api/projects/{w['proj']['id']}", {"name": "x"}),
            ("DELETE", f"/api/projects/{w['proj']['id']}", None),
        ]:
            _404(await client.request(method, url, json=body), w["ans"]["id"])
        for url in ("/api/conversations", "/api/projects"):
            r = await client.get(url, params={"workspace_id": w["wid"]})
            assert SECRET not in r.text
    assert checked >= 20
    assert await table_counts(app) == before

    # what each may list
    def ids(r):
        return {x["id"] for x in r.json()["items"]}

    url = "/api/conversations"
    pub, priv = w["pub"]["id"], w["priv"]["id"]
    for who, want in (("o", {pub, priv}), ("d", {pub, priv}), ("m", {pub, priv}), ("n", {pub})):
        assert ids(await w[who].client.get(url, params={"workspace_id": w["wid"]})) == want
    _404(await w["s"].client.get(url, params={"workspace_id": w["wid"]}))
    for who in ("o", "d", "m"):
        r = await w[who].client.get(f"/api/conversations/{priv}/messages")
        assert r.status_code == 200 and SECRET in r.text


async def test_public_rows_members_read_and_send_but_do_not_manage(new_user, app):
    w = await _world(new_user)
    n, s, d = w["n"].client, w["s"].client, w["d"].client
    base = f"/api/conversations/{w['pub']['id']}"
    assert (await n.get(base)).status_code == 200
    assert (await n.get(f"{base}/messages")).status_code == 200
    r = await n.post(f"{base}/messages", json={"content": "n speaks", "generate": False})
    assert r.status_code == 201 and r.json()["author_id"] == w["n"].id
    mine = r.json()["id"]
    assert (await n.patch(base, json={"title": "x"})).status_code == 403
    assert (await n.delete(base)).status_code == 403
    r = await n.patch(f"{base}/messages/{w['pq']['id']}", json={"content": "x"})
    assert r.status_code == 403
    assert (await n.patch(f"{base}/messages/{mine}", json={"content": "y"})).status_code == 200
    # shares follow visibility: whoever sees it may share it, a stranger may not
    assert (await n.post(f"{base}/share")).status_code == 201
    _404(await s.post(f"{base}/share"))
    _404(await s.get(base))
    assert (await d.patch(base, json={"title": "renamed by admin"})).status_code == 200


async def test_workspace_routes_by_role(new_user, app):
    """Every /api/workspaces/{wid} route (shared memory included): the stranger gets 404, a
    member reads but does not manage (403), an admin manages but neither deletes nor changes
    roles, the owner does."""
    w = await _world(new_user)
    wid, n_id = w["wid"], w["n"].id
    mem = (
        await w["d"].client.post(
            f"/api/workspaces/{wid}/memories", json={"memory_text": f"shared {SECRET}"}
        )
    ).json()["id"]
    mems = f"/api/workspaces/{wid}/memories"
    reads = {
        ("GET", f"/api/workspaces/{wid}"),
        ("GET", f"/api/workspaces/{wid}/members"),
        ("GET", mems),
        ("GET", f"{mems}/{mem}"),
        ("GET", f"{mems}/{mem}/history"),
    }
    admin_ok = {
        ("PATCH", f"/api/workspaces/{wid}"),
        ("POST", f"/api/workspaces/{wid}/invites"),
        ("GET", f"/api/workspaces/{wid}/invites"),
        ("POST", mems),
        ("PATCH", f"{mems}/{mem}"),
    }
    bodies = {
        f"/api/workspaces/{wid}": {"name": "Renamed"},
        f"/api/workspaces/{wid}/invites": {"role": "member"},
        f"/api/workspaces/{wid}/transfer": {"user_id": n_id},
        f"/api/workspaces/{wid}/members/{n_id}": {"role": "member"},
        mems: {"memory_text": "added"},
        f"{mems}/{mem}": {"importance": 5},
    }
    inv = (await w["o"].client.post(f"/api/workspaces/{wid}/invites", json={})).json()
    subs = {"wid": wid, "uid": n_id, "iid": inv["id"], "mid": mem}
    routes = list(_sweep_urls(app, "/api/workspaces/{wid}", subs))
    assert len(routes) >= 16
    before = await table_counts(app)
    for method, url in routes:
        body = bodies.get(url) if method not in ("GET", "DELETE") else None
        if method == "PATCH" and url.endswith(n_id):
            body = {"role": "member"}
        r = await w["s"].client.request(method, url, json=body)
        _404(r, "Team")
        r = await w["m"].client.request(method, url, json=body)
        if (method, url) in reads:
            assert r.status_code == 200, (method, url, r.text)
        else:
            assert r.status_code == 403, (method, url, r.status_code, r.text)
    assert await table_counts(app) == before
    for method, url in routes:
        if (method, url) in admin_ok:
            body = bodies.get(url) if method != "GET" else None
            r = await w["d"].client.request(method, url, json=body)
            assert r.status_code in (200, 201), (method, url, r.text)
    d = w["d"].client
    assert (await d.delete(f"/api/workspaces/{wid}")).status_code == 403
    r = await d.patch(f"/api/workspaces/{wid}/members/{n_id}", json={"role": "admin"})
    assert r.status_code == 403
    assert (
        await d.post(f"/api/workspaces/{wid}/transfer", json={"user_id": n_id})
    ).status_code == 403
    assert (await d.delete(f"/api/workspaces/{wid}/members/{n_id}")).status_code == 204
    assert (await w["o"].client.delete(f"/api/workspaces/{wid}")).status_code == 204
    _404(await d.get(f"/api/workspaces/{wid}"))

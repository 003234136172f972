"""The admin console's API on both databases: users (create, make admin, disable, reset
password, login link), usage per day/user/model, ratings by model with reasons, API keys of
one's own (create shown once, list, revoke), and failed-job retry — and every admin route
refused to a non-admin, every key route scoped to its owner."""

from __future__ import annotations

import httpx

from chatmem.jobs import worker as wk
from chatmem.jobs.queue import enqueue


def _client(app, **kw) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", **kw)


ADMIN_ROUTES = [
    ("GET", "/api/admin/users", None),
    ("POST", "/api/admin/users", {"email": "x@example.com"}),
    ("PATCH", "/api/admin/users/u_x", {"role": "admin"}),
    ("POST", "/api/admin/users/u_x/password", {"password": "a long password"}),
    ("POST", "/api/admin/users/u_x/login-link", None),
    ("GET", "/api/admin/usage", None),
    ("GET", "/api/admin/ratings", None),
    ("POST", "/api/admin/jobs/job_x/retry", None),
]


async def test_admin_routes_refuse_a_non_admin(new_user):
    user = await new_user()
    for method, path, body in ADMIN_ROUTES:
        r = await user.client.request(method, path, json=body)
        assert r.status_code == 403, (method, path, r.text)
    users = [
        u["email"]
        for u in (await (await new_user(admin=True)).client.get("/api/admin/users")).json()["items"]
    ]
    assert "x@example.com" not in users  # nothing was created by the refused call


async def test_admin_manages_users(new_user, app):
    admin = await new_user(admin=True)
    r = await admin.client.post(
        "/api/admin/users", json={"email": "New.Person@example.com", "name": "Nia"}
    )
    assert r.status_code == 201, r.text
    nia = r.json()
    assert (nia["email"], nia["role"], nia["disabled"], nia["has_password"]) == (
        "new.person@example.com",
        "user",
        False,
        False,
    )
    dup = await admin.client.post("/api/admin/users", json={"email": "new.person@example.com"})
    assert dup.status_code == 409
    # not an address: refused by the schema (422, as the OpenAPI document says), nothing created
    for bad in ("000", "a b@example.com", "two@@example.com", "a\x1cb@example.com"):
        r = await admin.client.post("/api/admin/users", json={"email": bad})
        assert r.status_code == 422, (bad, r.text)
    listed = {u["id"]: u for u in (await admin.client.get("/api/admin/users")).json()["items"]}
    assert nia["id"] in listed and admin.id in listed and len(listed) == 2

    # a login link logs the user in once
    link = (await admin.client.post(f"/api/admin/users/{nia['id']}/login-link")).json()
    assert "/api/auth/magic?token=" in link["url"]
    async with _client(app) as web:
        path = link["url"].split("http://test", 1)[1]
        assert (await web.get(path)).status_code == 303
        assert (await web.get("/api/me")).json()["email"] == "new.person@example.com"
        assert (await web.get(path)).status_code == 401  # used

    # reset the password → they log in with it
    r = await admin.client.post(
        f"/api/admin/users/{nia['id']}/password", json={"password": "short"}
    )
    assert r.status_code == 422
    r = await admin.client.post(
        f"/api/admin/users/{nia['id']}/password", json={"password": "a fresh password"}
    )
    assert r.status_code == 204
    login = {"email": nia["email"], "password": "a fresh password"}
    async with _client(app) as web:
        assert (await web.post("/api/auth/login", json=login)).status_code == 200

        # make admin, disable (their session ends, login refused), enable
        r = await admin.client.patch(f"/api/admin/users/{nia['id']}", json={"role": "admin"})
        assert r.json()["role"] == "admin"
        r = await admin.client.patch(f"/api/admin/users/{nia['id']}", json={"disabled": True})
        assert r.status_code == 200 and r.json()["disabled"] is True
        assert (await web.get("/api/me")).status_code == 401
        assert (await web.post("/api/auth/login", json=login)).status_code == 401
    r = await admin.client.patch(f"/api/admin/users/{nia['id']}", json={"disabled": False})
    assert r.json()["disabled"] is False

    # bad input and unknown ids: clear errors, nothing changed
    assert (
        await admin.client.patch(f"/api/admin/users/{nia['id']}", json={"role": "root"})
    ).status_code == 422
    assert (
        await admin.client.patch("/api/admin/users/u_nobody", json={"role": "admin"})
    ).status_code == 404
    assert (await admin.client.post("/api/admin/users/u_nobody/login-link")).status_code == 404
    me = await admin.client.patch(f"/api/admin/users/{admin.id}", json={"role": "user"})
    assert me.status_code == 409 and me.json()["error"]["code"] == "self_change"
    me = await admin.client.patch(f"/api/admin/users/{admin.id}", json={"disabled": True})
    assert me.status_code == 409


async def _answer(u, text: str) -> tuple[str, str]:
    c = (await u.client.post("/api/conversations", json={"title": "t"})).json()
    await u.client.post(
        f"/api/conversations/{c['id']}/messages", json={"content": "q", "generate": False}
    )
    r = await u.client.post(
        f"/api/conversations/{c['id']}/messages", json={"content": text, "role": "assistant"}
    )
    return c["id"], r.json()["id"]


async def test_usage_and_ratings_by_model(new_user):
    admin = await new_user(admin=True)
    a, b = await new_user(), await new_user()
    ca, ma = await _answer(a, "one")
    await _answer(a, "two")
    cb, mb = await _answer(b, "three")
    r = await a.client.post(
        f"/api/conversations/{ca}/messages/{ma}/feedback",
        json={"feedback": "dislike", "reasons": ["incorrect_fact"], "comment": "wrong year"},
    )
    assert r.status_code == 200, r.text
    await b.client.post(
        f"/api/conversations/{cb}/messages/{mb}/feedback", json={"feedback": "like"}
    )

    usage = (await admin.client.get("/api/admin/usage", params={"days": 7})).json()
    mine = [row for row in usage["rows"] if row["user_id"] == a.id]
    assert sum(row["answers"] for row in mine) == 2
    assert all(row["day"] % 86_400_000 == 0 and row["day"] >= usage["since"] for row in mine)
    assert sum(row["answers"] for row in usage["rows"] if row["user_id"] == b.id) == 1
    assert (await admin.client.get("/api/admin/usage", params={"days": 0})).status_code == 422

    summary = (await admin.client.get("/api/admin/ratings")).json()
    likes = sum(m["likes"] for m in summary["models"])
    dislikes = sum(m["dislikes"] for m in summary["models"])
    assert (likes, dislikes) == (1, 1)
    assert any(m["reasons"].get("incorrect_fact") == 1 for m in summary["models"])
    assert summary["recent"][0]["comment"] == "wrong year"
    assert summary["recent"][0]["user_email"] == a.email


async def test_api_keys_shown_once_listed_revoked_and_scoped(new_user, app):
    a, b = await new_user(), await new_user()
    r = await a.client.post("/api/me/keys", json={"name": "laptop"})
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["key"]["name"] == "laptop" and made["secret"].startswith(made["key"]["prefix"])
    listed = (await a.client.get("/api/me/keys")).json()["items"]
    assert [k["name"] for k in listed] == ["default", "laptop"]
    assert all("secret" not in k for k in listed)
    assert made["key"]["id"] not in [
        k["id"] for k in (await b.client.get("/api/me/keys")).json()["items"]
    ]
    async with _client(app, headers={"Authorization": f"Bearer {made['secret']}"}) as k:
        assert (await k.get("/api/me")).json()["email"] == a.email
        # another user cannot revoke it (404), nor can it be revoked by its prefix
        assert (await b.client.delete(f"/api/me/keys/{made['key']['id']}")).status_code == 404
        assert (await a.client.delete(f"/api/me/keys/{made['key']['prefix']}")).status_code == 404
        assert (await k.get("/api/me")).status_code == 200
        assert (await a.client.delete(f"/api/me/keys/{made['key']['id']}")).status_code == 204
        assert (await k.get("/api/me")).status_code == 401
    assert (await a.client.delete(f"/api/me/keys/{made['key']['id']}")).status_code == 404
    after = {k["id"]: k for k in (await a.client.get("/api/me/keys")).json()["items"]}
    assert after[made["key"]["id"]]["revoked_at"] is not None
    assert (await a.client.post("/api/me/keys", json={"name": "x" * 101})).status_code == 422


async def test_admin_retries_a_failed_job(new_user, app):
    db = app.state.runtime.db
    admin = await new_user(admin=True)
    async with db.write() as c:
        jid = await enqueue(c, "test.nobody-handles-this", {})
    assert (await admin.client.post(f"/api/admin/jobs/{jid}/retry")).status_code == 409  # queued
    job = await wk.claim(db, "w", visibility_ms=60_000, kinds=["test.nobody-handles-this"])
    await wk.fail(db, job, "w", "boom", permanent=True, base_s=1, cap_s=1)
    r = await admin.client.post(f"/api/admin/jobs/{jid}/retry")
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["attempts"]) == ("queued", 0)
    assert (await admin.client.post("/api/admin/jobs/job_nope/retry")).status_code == 404


async def test_login_link_is_on_the_public_url_when_one_is_set(new_user, app, monkeypatch):
    admin, user = await new_user(admin=True), await new_user()
    monkeypatch.setattr(app.state.runtime.settings, "public_url", "https://chat.example.org/")
    link = (await admin.client.post(f"/api/admin/users/{user.id}/login-link")).json()
    assert link["url"].startswith("https://chat.example.org/api/auth/magic?token=")

"""Authentication: API keys (missing, unknown, revoked), password login to a session cookie, the
CSRF check on cookie-authenticated writes, logout, expiry and disabled accounts."""

from __future__ import annotations

import contextlib

import httpx
from sqlalchemy import update

from chatmem.auth import service as auth_service
from chatmem.auth import store as auth_store
from chatmem.db import schema as t

from .tree_api import table_counts

PASSWORD = "correct horse battery"


def _401(r):
    assert r.status_code == 401, (r.request.url, r.status_code, r.text)
    err = r.json()["error"]
    assert err["code"] == "unauthorized" and set(err) == {"code", "message", "details"}


def _client(app, **kw) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", **kw)


async def test_api_keys(new_user, anon, app):
    a = await new_user()
    assert (await a.client.get("/api/conversations")).status_code == 200
    _401(await anon.get("/api/conversations"))
    _401(await anon.post("/api/conversations", json={}))
    _401(await anon.get("/api/me"))
    for header in (
        "Bearer cm_not-a-real-key",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        a.key,
        f"Token {a.key}",
    ):
        _401(await anon.get("/api/conversations", headers={"Authorization": header}))
    # revoke the key: it stops working, a second key of the same user keeps working
    rt = app.state.runtime
    _kid, key2 = await auth_service.create_key(rt.db, a.id, "second")
    [first] = [k for k in await auth_service.list_keys(rt.db, a.id) if k["name"] == "default"]
    assert await auth_service.revoke_key(rt.db, first["id"], a.id) == 1
    _401(await a.client.get("/api/conversations"))
    before = await table_counts(app)
    _401(await a.client.post("/api/conversations", json={"title": "after revoke"}))
    assert await table_counts(app) == before
    r = await anon.get("/api/me", headers={"Authorization": f"Bearer {key2}"})
    assert r.status_code == 200 and r.json()["id"] == a.id
    # a disabled account's keys stop working too, at once in the process that disables it
    async with rt.db.write() as c:
        await auth_store.update_user(c, a.id, disabled=1)
    _401(await anon.get("/api/me", headers={"Authorization": f"Bearer {key2}"}))


async def test_auth_cache_staleness_bound(new_user, anon, app):
    """The caller of a key is remembered for auth_cache_s (auth/cache.py): a change made behind
    this process's back (another replica, the CLI: here a raw UPDATE) is seen once the entry
    expires, never later; the same change through the auth store is seen at once."""
    rt = app.state.runtime
    now = [1000.0]
    rt.principals.clock = lambda: now[0]
    a = await new_user()
    me = {"Authorization": f"Bearer {a.key}"}
    assert (await anon.get("/api/me", headers=me)).status_code == 200  # remembered from here
    async with rt.db.write() as c:
        await c.execute(update(t.users).where(t.users.c.id == a.id).values(disabled=1))
    assert (await anon.get("/api/me", headers=me)).status_code == 200  # within the window
    now[0] += rt.settings.auth_cache_s
    _401(await anon.get("/api/me", headers=me))
    # through the store (revoke, disable, settings, logout …) every process entry is voided
    async with rt.db.write() as c:
        await auth_store.update_user(c, a.id, disabled=0)
    assert (await anon.get("/api/me", headers=me)).status_code == 200
    async with rt.db.write() as c:
        await auth_store.update_user(c, a.id, settings={"memory_enabled": False})
    r = await anon.get("/api/me", headers=me)
    assert r.json()["settings"]["memory_enabled"] is False
    # a write that rolls back keeps nothing stale either: the entry is simply read again
    with contextlib.suppress(RuntimeError):
        async with rt.db.write() as c:
            await auth_store.update_user(c, a.id, disabled=1)
            raise RuntimeError("rolled back")
    assert (await anon.get("/api/me", headers=me)).status_code == 200


async def test_session_cookie_csrf_and_logout(new_user, app):
    a = await new_user(password=PASSWORD)
    b = await new_user(password="another password")
    await b.client.post("/api/conversations", json={"title": "b's"})
    async with _client(app) as web:
        _401(await web.post("/api/auth/login", json={"email": a.email, "password": "wrong"}))
        _401(
            await web.post(
                "/api/auth/login", json={"email": "nobody@example.com", "password": PASSWORD}
            )
        )
        assert "chatmem_session" not in web.cookies
        r = await web.post("/api/auth/login", json={"email": a.email.upper(), "password": PASSWORD})
        assert r.status_code == 200, r.text
        csrf = r.json()["csrf_token"]
        assert r.json()["user"]["id"] == a.id and "password_hash" not in r.json()["user"]
        set_cookie = ", ".join(r.headers.get_list("set-cookie"))
        assert "chatmem_session=" in set_cookie and "HttpOnly" in set_cookie
        assert web.cookies["chatmem_csrf"] == csrf
        session = web.cookies["chatmem_session"]

        r = await web.get("/api/me")
        assert r.status_code == 200 and r.json()["id"] == a.id
        r = await web.get("/api/conversations")
        assert r.status_code == 200 and r.json()["items"] == []  # not b's

        before = await table_counts(app)
        for headers in (
            {},
            {"X-CSRF-Token": "guess"},
            {"X-CSRF-Token": ""},
            {"X-CSRF-Token": "caf\xe9".encode("latin-1")},
        ):
            r = await web.post("/api/conversations", json={"title": "x"}, headers=headers)
            assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
        assert await table_counts(app) == before
        r = await web.post(
            "/api/conversations", json={"title": "via cookie"}, headers={"X-CSRF-Token": csrf}
        )
        assert r.status_code == 201, r.text
        cid = r.json()["id"]
        r = await web.patch(f"/api/conversations/{cid}", json={"starred": True})
        assert r.status_code == 403
        r = await web.patch(
            f"/api/conversations/{cid}", json={"starred": True}, headers={"X-CSRF-Token": csrf}
        )
        assert r.status_code == 200 and r.json()["starred"] is True
        # another session's CSRF token does not fit this session
        async with _client(app) as other:
            r = await other.post(
                "/api/auth/login", json={"email": b.email, "password": "another password"}
            )
            b_csrf = r.json()["csrf_token"]
        r = await web.post("/api/conversations", json={}, headers={"X-CSRF-Token": b_csrf})
        assert r.status_code == 403

        # a foreign page cannot log the user out: logout of a live session needs the token
        r = await web.post("/api/auth/logout")
        assert r.status_code == 403
        assert (await web.get("/api/me")).status_code == 200
        r = await web.post("/api/auth/logout", headers={"X-CSRF-Token": csrf})
        assert r.status_code == 204
        _401(await web.get("/api/me"))
    # the old cookie value is dead on the server, not just forgotten by the client
    async with _client(app, cookies={"chatmem_session": session}) as replay:
        _401(await replay.get("/api/me"))
        _401(await replay.get("/api/conversations"))


async def test_expired_session_is_rejected(new_user, app):
    a = await new_user(password=PASSWORD)
    async with _client(app) as web:
        r = await web.post("/api/auth/login", json={"email": a.email, "password": PASSWORD})
        assert r.status_code == 200
        assert (await web.get("/api/me")).status_code == 200
        async with app.state.runtime.db.write() as c:
            await c.execute(
                update(t.web_sessions).where(t.web_sessions.c.user_id == a.id).values(expires_at=1)
            )
        # the time that passed would have taken the session's cache entry with it
        app.state.runtime.principals.clear()
        _401(await web.get("/api/me"))


async def test_user_without_password_cannot_log_in(new_user, anon):
    a = await new_user()  # API-key-only account
    _401(await anon.post("/api/auth/login", json={"email": a.email, "password": "x"}))


async def test_key_use_is_recorded(new_user, app):
    from chatmem.auth import service

    a = await new_user()
    assert (await a.client.get("/api/me")).status_code == 200
    keys = await service.list_keys(app.state.runtime.db, a.id)
    assert keys[0]["last_used_at"] is not None

"""Getting back in: changing a password from the web session, the CLI's set-password and
login-link, the profile's language and theme, and default conversation titles in the user's
language."""

from __future__ import annotations

import httpx

from chatmem import i18n

from .servers import chatmem_env, create_user
from .test_cli import run

OLD, NEW = "old password 1", "new password 22"


def _client(app, **kw) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", **kw)


async def _login(app, email: str, password: str) -> tuple[httpx.AsyncClient, str]:
    web = _client(app)
    r = await web.post("/api/auth/login", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    return web, r.json()["csrf_token"]


async def test_change_password_ends_other_sessions(new_user, app):
    a = await new_user(password=OLD)
    web, csrf = await _login(app, a.email, OLD)
    other, _ = await _login(app, a.email, OLD)
    try:
        me = (await web.get("/api/me")).json()
        assert me["has_password"] is True
        h = {"X-CSRF-Token": csrf}
        # no CSRF token → 403, nothing changed
        r = await web.post("/api/me/password", json={"current_password": OLD, "new_password": NEW})
        assert r.status_code == 403
        r = await web.post(
            "/api/me/password", json={"current_password": "nope", "new_password": NEW}, headers=h
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == "wrong_password"
        r = await web.post(
            "/api/me/password", json={"current_password": OLD, "new_password": "short"}, headers=h
        )
        assert r.status_code == 422
        assert (await other.get("/api/me")).status_code == 200  # nothing changed yet
        r = await web.post(
            "/api/me/password", json={"current_password": OLD, "new_password": NEW}, headers=h
        )
        assert r.status_code == 204, r.text
        assert (await web.get("/api/me")).status_code == 200  # this session stays
        assert (await other.get("/api/me")).status_code == 401  # the other one ended
    finally:
        await web.aclose()
        await other.aclose()
    async with _client(app) as anon:
        bad = {"email": a.email, "password": OLD}
        assert (await anon.post("/api/auth/login", json=bad)).status_code == 401
        good = {"email": a.email, "password": NEW}
        assert (await anon.post("/api/auth/login", json=good)).status_code == 200


async def test_session_probe_answers_200_logged_in_or_out(new_user, app):
    a = await new_user(password=OLD)
    async with _client(app) as anon:
        assert (await anon.get("/api/auth/session")).json() == {"user": None}
        anon.cookies.set("chatmem_session", "not-a-session")
        r = await anon.get("/api/auth/session")
        assert r.status_code == 200 and r.json() == {"user": None}
    web, _ = await _login(app, a.email, OLD)
    try:
        r = await web.get("/api/auth/session")
        assert r.status_code == 200 and r.json()["user"]["email"] == a.email
    finally:
        await web.aclose()


async def test_first_password_needs_no_current_one(new_user, app):
    """The first-start admin comes in by a login link and has no password yet."""
    a = await new_user()
    assert (await a.client.get("/api/me")).json()["has_password"] is False
    r = await a.client.post("/api/me/password", json={"new_password": NEW})
    assert r.status_code == 204, r.text
    r = await a.client.post("/api/me/password", json={"new_password": "another one 3"})
    assert r.status_code == 400  # now the current password is required
    async with _client(app) as anon:
        good = {"email": a.email, "password": NEW}
        assert (await anon.post("/api/auth/login", json=good)).status_code == 200


async def test_profile_language_theme_and_default_titles(new_user):
    a = await new_user()
    c = a.client
    r = await c.post("/api/conversations", json={})
    assert r.json()["title"] == "New chat"
    r = await c.post("/api/conversations", json={}, headers={"Accept-Language": "zh-CN,en;q=0.5"})
    assert r.json()["title"] == "新对话"
    r = await c.patch("/api/me", json={"language": "zh", "theme": "dark"})
    assert r.status_code == 200 and r.json()["settings"]["language"] == "zh"
    assert r.json()["settings"]["theme"] == "dark"
    assert (await c.post("/api/conversations", json={})).json()["title"] == "新对话"
    # the user's choice wins over the browser's header
    r = await c.post("/api/conversations", json={}, headers={"Accept-Language": "en"})
    assert r.json()["title"] == "新对话"
    assert (await c.patch("/api/me", json={"language": "fr"})).status_code == 422
    assert (await c.patch("/api/me", json={"theme": "pink"})).status_code == 422


def test_accept_language_parsing():
    f = i18n.from_accept_language
    assert f(None) is None and f("") is None and f("fr-FR,de") is None
    assert f("zh-TW") == "zh" and f("en-GB,zh;q=0.9") == "en"
    assert f("fr;q=1, zh;q=0.4, en;q=0.8") == "en"
    assert f("en;q=0, zh") == "zh" and f("zh;q=bad, en") == "en"
    assert i18n.pick_language("zh", "en") == "zh" and i18n.pick_language(None, None) == "en"


def test_cli_set_password_and_login_link(db_url):
    env = chatmem_env(db_url, CHATMEM_PUBLIC_URL="https://chat.example.com/")
    create_user(db_url, "locked@example.com")
    r = run(["users", "set-password", "--email", "locked@example.com", "--password", "x"], env)
    assert r.returncode == 1 and "8 to 1024" in r.stdout
    r = run(["users", "set-password", "--email", "nobody@example.com", "--password", NEW], env)
    assert r.returncode == 1 and "no user" in r.stdout
    r = run(["users", "set-password", "--email", "LOCKED@example.com", "--password", NEW], env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "password set for locked@example.com" in r.stdout
    r = run(["users", "login-link", "--email", "locked@example.com"], env)
    assert r.returncode == 0, r.stdout + r.stderr
    link = r.stdout.strip().splitlines()[-1]
    assert link.startswith("https://chat.example.com/api/auth/magic?token=")
    r = run(["users", "login-link", "--email", "nobody@example.com"], env)
    assert r.returncode == 1

"""The HTTP edge (issue 10): login and login-link throttling with 429 + Retry-After, password
hashing off the event loop, security headers on every response, Secure cookies behind a trusted
https proxy (and only a trusted one), and the request-body limit (413 before buffering)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest

from chatmem.db import schema as t

from .conftest import make_settings
from .social_support import assert_error
from .tree_api import table_counts

PASSWORD = "correct horse battery staple"


def client(app, ip: str = "127.0.0.1", **kw) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=(ip, 4242)), base_url="http://test", **kw
    )


async def _login(c, email: str, password: str):
    return await c.post("/api/auth/login", json={"email": email, "password": password})


def _retry_after(r) -> int:
    err = assert_error(r, 429, "rate_limited")
    wait = int(r.headers["retry-after"])
    assert 0 < wait <= 3600 and err["details"]["retry_after_s"] == wait
    return wait


async def test_wrong_passwords_for_one_account_get_429(app, new_user):
    a = await new_user(password=PASSWORD)
    statuses = []
    for i in range(30):  # the 30 wrong passwords in a row — from 30 different IPs
        async with client(app, ip=f"10.0.0.{i + 1}") as c:
            r = await _login(c, a.email, "wrong")
        statuses.append(r.status_code)
    assert statuses[:5] == [401] * 5 and set(statuses[5:]) == {429}
    async with client(app, ip="10.1.1.1") as c:
        r = await _login(c, a.email.upper(), PASSWORD)  # even the right password: wait
        _retry_after(r)
        assert "set-cookie" not in r.headers
    # other accounts are not affected
    b = await new_user(password=PASSWORD)
    async with client(app, ip="10.1.1.2") as c:
        assert (await _login(c, b.email, PASSWORD)).status_code == 200


async def test_one_ip_is_limited_across_accounts(app, new_user):
    async with client(app, ip="192.0.2.7") as c:
        statuses = [(await _login(c, f"nobody{i}@example.com", "x")).status_code for i in range(25)]
        _retry_after(await _login(c, "nobody@example.com", "x"))
    assert statuses[:20] == [401] * 20 and set(statuses[20:]) == {429}
    async with client(app, ip="192.0.2.8") as c:  # another address is not
        assert (await _login(c, "nobody@example.com", "x")).status_code == 401


async def test_a_success_clears_the_account_count(app, new_user):
    a = await new_user(password=PASSWORD)
    async with client(app) as c:
        for _ in range(4):
            assert (await _login(c, a.email, "wrong")).status_code == 401
        assert (await _login(c, a.email, PASSWORD)).status_code == 200
        for _ in range(4):
            assert (await _login(c, a.email, "wrong")).status_code == 401


async def test_login_link_is_limited_per_ip(app):
    async with client(app, ip="198.51.100.1") as c:
        codes = [
            (await c.get("/api/auth/magic", params={"token": f"t{i}"})).status_code
            for i in range(10)
        ]
        assert set(codes) == {401}
        _retry_after(await c.get("/api/auth/magic", params={"token": "guess"}))


async def test_password_hashing_runs_off_the_event_loop(app, new_user, monkeypatch):
    """argon2 (login, unknown-user burn, new passwords) runs on the CPU pool, never on the
    loop's thread — on the loop, each login would stall every other request for a whole hash."""
    from chatmem.auth import service

    threads: list[str] = []

    def spy(fn):
        def wrapper(*args):
            threads.append(threading.current_thread().name)
            return fn(*args)

        return wrapper

    for name in ("verify_password", "burn_password_check", "hash_password"):
        monkeypatch.setattr(service, name, spy(getattr(service, name)))
    a = await new_user(password=PASSWORD)
    async with client(app) as c:
        await asyncio.gather(
            _login(c, a.email, PASSWORD), _login(c, a.email, "wrong"), _login(c, "x@y.z", "w")
        )
    assert len(threads) == 4 and all(n.startswith("chatmem-cpu") for n in threads), threads


CSP_MUST = (
    "default-src 'self'",
    "script-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
)


async def test_security_headers_on_every_response(app, new_user, anon):
    a = await new_user()
    for r in (
        await anon.get("/"),
        await anon.get("/api/health"),
        await anon.get("/api/conversations"),  # 401
        await anon.get("/nope"),  # 404
        await a.client.get("/api/conversations"),
        await anon.get("/rpc/nope"),
        await anon.get("/static/app.js"),
    ):
        h = r.headers
        assert h["x-content-type-options"] == "nosniff", r.url
        assert h["referrer-policy"] == "no-referrer"
        assert h["x-frame-options"] == "DENY"
        csp = h["content-security-policy"]
        assert all(d in csp for d in CSP_MUST) and "unsafe-inline" not in csp, csp
        assert "strict-transport-security" not in h  # plain http
    docs = await anon.get("/docs")
    assert "frame-ancestors 'none'" in docs.headers["content-security-policy"]


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, trusted_proxies="10.0.0.0/8", max_body_bytes=64 * 1024)


async def test_secure_cookies_behind_a_trusted_https_proxy_only(app, new_user):
    a = await new_user(password=PASSWORD)
    fwd = {"x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9"}
    async with client(app, ip="10.2.3.4", headers=fwd) as c:  # the trusted proxy
        r = await _login(c, a.email, PASSWORD)
        assert r.status_code == 200
        cookies = r.headers.get_list("set-cookie")
        assert len(cookies) == 2 and all("Secure" in v for v in cookies)
        assert "max-age=31536000" in r.headers["strict-transport-security"]
    async with client(app, ip="172.16.0.1", headers=fwd) as c:  # not a trusted proxy
        r = await _login(c, a.email, PASSWORD)
        assert r.status_code == 200
        assert not any("Secure" in v for v in r.headers.get_list("set-cookie"))
        assert "strict-transport-security" not in r.headers


async def test_forwarded_for_counts_only_from_trusted_proxies(app):
    # behind the trusted proxy, each forwarded client has its own login budget ...
    for i in range(25):
        fwd = {"x-forwarded-for": f"203.0.113.{i + 1}"}
        async with client(app, ip="10.0.0.1", headers=fwd) as c:
            assert (await _login(c, f"n{i}@example.com", "x")).status_code == 401
    # ... while an untrusted peer cannot dodge its limit by claiming other addresses
    codes = []
    for i in range(25):
        fwd = {"x-forwarded-for": f"198.51.100.{i + 1}"}
        async with client(app, ip="172.16.0.9", headers=fwd) as c:
            codes.append((await _login(c, f"m{i}@example.com", "x")).status_code)
    assert codes.count(429) == 5


async def test_body_limit_413_before_the_route(app, new_user):
    a = await new_user()
    before = await table_counts(app)
    big = b'{"title": "' + b"x" * (64 * 1024) + b'"}'
    r = await a.client.post(
        "/api/conversations", content=big, headers={"content-type": "application/json"}
    )
    err = assert_error(r, 413, "payload_too_large")
    assert err["details"] == {"limit": 64 * 1024}

    async def chunks():  # no Content-Length: counted as it arrives
        yield b'{"title": "'
        for _ in range(100):
            yield b"y" * 1024
        yield b'"}'

    r = await a.client.post(
        "/api/conversations", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error(r, 413, "payload_too_large")
    r = await a.client.post(
        "/rpc/chat/inbox", content=big, headers={"content-type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["ok"] is False
    assert r.json()["error"]["code"] == "payload_too_large"
    assert await table_counts(app) == before
    # under the limit is fine; multipart has its own cap (a 100 KiB upload is not refused here)
    assert (await a.client.post("/api/conversations", json={"title": "ok"})).status_code == 201
    shot = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + (8).to_bytes(4, "big") * 2 + b"\x08\x02\0\0\0"
    r = await a.client.post(
        "/api/user-feedback",
        data={"description": "x"},
        files={"screenshot": ("a.png", shot + b"\0" * 100_000, "image/png")},
    )
    assert r.status_code != 413, r.text
    assert (await table_counts(app))[t.conversations.name] == before[t.conversations.name] + 1


@pytest.mark.slow
def test_real_server_refuses_huge_bodies_before_reading_them(db_url):
    """A declared 100 MB body is refused with no byte of it sent; a chunked body the moment it
    passes the limit — the rest is never sent (uvicorn + the ASGI middleware, for real)."""
    from tests.servers import Server

    server = Server(db_url, env_extra={"CHATMEM_MAX_BODY_BYTES": "1000000"}).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
            s.sendall(
                b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000000\r\n\r\n"
            )
            head = s.recv(65536)
        assert head.startswith(b"HTTP/1.1 413"), head[:200]
        assert b"payload_too_large" in head or b"content-length" in head.lower()
        sent = 0
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
            s.sendall(
                b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            chunk = b"x" * 65536
            s.settimeout(0.05)
            response = b""
            deadline = time.monotonic() + 60
            while sent < 100_000_000 and time.monotonic() < deadline:
                try:
                    s.sendall(b"10000\r\n" + chunk + b"\r\n")
                    sent += len(chunk)
                except (TimeoutError, BrokenPipeError, ConnectionResetError):
                    break
                try:
                    response += s.recv(65536)
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    break
                if response:
                    break
            s.settimeout(10)
            try:
                while b"\r\n\r\n" not in response:
                    more = s.recv(65536)
                    if not more:
                        break
                    response += more
            except (TimeoutError, ConnectionResetError):
                pass
        assert response.startswith(b"HTTP/1.1 413"), response[:200]
        assert sent < 10_000_000, sent  # answered long before the 100 MB were sent
        assert httpx.get(f"{server.base}/api/health").status_code == 200
    finally:
        server.stop()


async def test_405_lists_every_method_of_the_path(app, new_user):
    a = await new_user()
    r = await a.client.put("/api/me")
    assert r.status_code == 405 and r.headers["allow"] == "GET, PATCH"
    r = await a.client.request("TRACE", "/api/conversations/c_x/messages/m_y")
    assert r.status_code == 405 and r.headers["allow"] == "DELETE, GET, PATCH"
    r = await a.client.put("/rpc/agent/my/a/memories/m")
    assert r.status_code == 405 and r.json()["ok"] is False
    assert set(r.headers["allow"].split(", ")) == {"DELETE", "PATCH"}
    # a static path beside a templated one names its own resource (schemathesis ST205): the join
    # route's, not an invite id for DELETE /api/workspace-invites/{iid}
    r = await a.client.options("/api/workspace-invites/join")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    r = await a.client.options("/api/workspace-invites/inv_x")
    assert r.status_code == 405 and r.headers["allow"] == "DELETE"

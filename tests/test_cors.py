"""CORS: none by default; listed origins get credentials; ``*`` admits others without them."""

from __future__ import annotations

import httpx
import pytest

from chatmem.app import create_app
from chatmem.config import Settings
from chatmem.edge.cors import parse_origins

APP = "https://app.example.com"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, x-csrf-token",
}


def _client(tmp_path, origins: str) -> httpx.AsyncClient:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/c.db", cors_origins=origins)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings)), base_url="http://test"
    )


def test_parse_origins():
    assert parse_origins("") == ([], False)
    assert parse_origins(f" {APP}/ , *,http://localhost:3000") == (
        [APP, "http://localhost:3000"],
        True,
    )


async def test_no_cors_by_default(tmp_path):
    async with _client(tmp_path, "") as c:
        r = await c.options("/api/conversations", headers={"Origin": APP, **PREFLIGHT})
        assert "access-control-allow-origin" not in r.headers
        r = await c.get("/api/me", headers={"Origin": APP})
        assert "access-control-allow-origin" not in r.headers


async def test_listed_origin_preflight_and_credentials(tmp_path):
    async with _client(tmp_path, f"{APP}, http://localhost:3000") as c:
        r = await c.options("/api/conversations", headers={"Origin": APP, **PREFLIGHT})
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == APP
        assert r.headers["access-control-allow-credentials"] == "true"
        allowed = r.headers["access-control-allow-headers"].lower()
        assert {"authorization", "content-type", "x-csrf-token"} <= {
            h.strip() for h in allowed.split(",")
        }
        assert "POST" in r.headers["access-control-allow-methods"]
        # an actual request (here an error) carries the headers too, and exposes ours
        r = await c.get("/api/me", headers={"Origin": APP})
        assert r.status_code == 401
        assert r.headers["access-control-allow-origin"] == APP
        exposed = {h.strip() for h in r.headers["access-control-expose-headers"].lower().split(",")}
        assert {"x-request-id", "x-chatmem-conversation", "x-chatmem-message"} <= exposed
        assert {"x-user-message-id", "x-assistant-message-id", "retry-after"} <= exposed
        for door in ("/v1/chat/completions", "/rpc/chat/inbox", "/mcp/"):
            r = await c.options(door, headers={"Origin": APP, **PREFLIGHT})
            assert r.status_code == 200, door
            assert r.headers["access-control-allow-origin"] == APP


@pytest.mark.parametrize("origins", [APP, ""])
async def test_unlisted_origin_gets_nothing(tmp_path, origins):
    async with _client(tmp_path, origins) as c:
        evil = "https://evil.example"
        r = await c.options("/api/conversations", headers={"Origin": evil, **PREFLIGHT})
        assert "access-control-allow-origin" not in r.headers
        r = await c.get("/api/health", headers={"Origin": evil})
        assert "access-control-allow-origin" not in r.headers


async def test_wildcard_never_grants_credentials(tmp_path):
    async with _client(tmp_path, f"*, {APP}") as c:
        other = "https://elsewhere.example"
        r = await c.options("/api/conversations", headers={"Origin": other, **PREFLIGHT})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-credentials" not in r.headers
        r = await c.get("/api/health", headers={"Origin": other, "Cookie": "chatmem_session=x"})
        assert r.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-credentials" not in r.headers
        r = await c.get("/api/health", headers={"Origin": APP})  # listed: credentials
        assert r.headers["access-control-allow-origin"] == APP
        assert r.headers["access-control-allow-credentials"] == "true"

"""The MCP server at /mcp, driven by the official ``mcp`` SDK's own streamable-HTTP client against a
live ``chatmem serve`` (SQLite and PostgreSQL): memory tools and conversation search, scoped to
the API key's user; a missing or wrong key is refused."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .servers import Server, create_user

pytestmark = pytest.mark.slow

TOOLS = {
    "list_memories",
    "search_memories",
    "add_memory",
    "forget_memory",
    "search_conversations",
    "get_message",
}


#: A bare ``initialize`` request, as any MCP client's first.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.fixture
def live(db_url):
    keys = [create_user(db_url, f"mcp{i}@example.com") for i in range(2)]
    server = Server(db_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "0"}).start()
    try:
        yield server, keys
    finally:
        server.stop()


@asynccontextmanager
async def mcp_session(url: str, key: str):
    """One SDK client session authenticated by ``key``."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _seed_turn(server, key) -> tuple[str, str]:
    with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"}) as c:
        cid = c.post("/api/conversations", json={"title": "Trip to Porto"}).json()["id"]
        r = c.post(f"/api/conversations/{cid}/messages", json={"content": "Plan the Porto trip"})
        mid = r.json()["user_message_id"]
        for _ in range(100):
            if c.get(f"/api/conversations/{cid}").json()["message_count"] == 2:
                break
            time.sleep(0.05)
        return cid, mid


async def test_memory_tools_and_search_with_the_sdk_client(live):
    server, (key, other_key) = live
    cid, mid = _seed_turn(server, key)
    async with mcp_session(f"{server.base}/mcp", key) as s:
        assert {t.name for t in (await s.list_tools()).tools} >= TOOLS
        added = await s.call_tool("add_memory", {"text": "Prefers window seats", "importance": 4})
        assert not added.is_error, added
        mem = added.structured_content
        assert mem["memory_text"] == "Prefers window seats" and mem["importance"] == 4
        listed = (await s.call_tool("list_memories", {})).structured_content["memories"]
        assert [m["id"] for m in listed] == [mem["id"]]
        found = (await s.call_tool("search_memories", {"query": "window"})).structured_content
        assert [m["id"] for m in found["memories"]] == [mem["id"]]
        hits = (await s.call_tool("search_conversations", {"query": "Porto"})).structured_content
        assert [h["id"] for h in hits["conversations"]] == [cid]
        assert mid in [h["id"] for h in hits["messages"]]
        msg = (await s.call_tool("get_message", {"message_id": mid})).structured_content
        assert msg["text"] == "Plan the Porto trip" and msg["conversation_id"] == cid
        gone = await s.call_tool("forget_memory", {"memory_id": mem["id"]})
        assert not gone.is_error
        assert (await s.call_tool("list_memories", {})).structured_content["memories"] == []
        bad = await s.call_tool("get_message", {"message_id": "msg_nope"})
        assert bad.is_error and "not_found" in bad.content[0].text

    # another user's key sees none of it
    async with mcp_session(f"{server.base}/mcp", other_key) as s:
        assert (await s.call_tool("search_conversations", {"query": "Porto"})).structured_content[
            "conversations"
        ] == []
        assert (await s.call_tool("get_message", {"message_id": mid})).is_error


async def test_a_missing_or_wrong_key_is_refused(live):
    server, _ = live
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as c:
        for auth in ({}, {"Authorization": "Bearer cm_wrong"}):
            r = await c.post(f"{server.base}/mcp/", json=INIT, headers={**headers, **auth})
            assert r.status_code == 401, r.text


async def test_the_readme_url_answers_without_a_redirect(live):
    """``/mcp`` (the README's URL) is the server itself, not a 307 to ``/mcp/``: a client that
    does not follow redirects works, and no ``http://`` address leaks behind a TLS proxy."""
    server, (key, _) = live
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(follow_redirects=False) as c:
        for path in ("/mcp", "/mcp/"):
            r = await c.post(f"{server.base}{path}", json=INIT, headers=headers)
            assert r.status_code == 200, (path, r.status_code, r.headers)
            assert r.json()["result"]["serverInfo"], r.text
        r = await c.post(f"{server.base}/mcp", json=INIT, headers={"Accept": headers["Accept"]})
        assert r.status_code == 401  # the same app, the same authentication

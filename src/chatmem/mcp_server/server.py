"""The MCP server at ``/mcp`` (streamable HTTP, the official ``mcp`` SDK), authenticated by a
chatmem API key as the bearer token.

Tools (each scoped to the key's user, through the same services as the HTTP API):

- ``list_memories`` / ``search_memories`` — what chatmem remembers about the user (active ones by
  default; a query matches the text);
- ``add_memory`` — remember something the user said (origin ``user``, like the memory library);
- ``forget_memory`` — soft-delete (or ``purge``) one memory;
- ``search_conversations`` — conversation titles and message snippets matching a query;
- ``get_message`` — one message's full text and metadata by id.

Stateless HTTP (every request stands alone), so any replica answers any call. The key is checked
by the SDK's bearer-token middleware through ``ApiKeyVerifier``; DNS-rebinding protection is off
because a browser cannot attach the key to a forged request.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl, Field
from starlette.routing import Route

from ..auth import service as auth_service
from ..auth.models import Principal
from ..conversations import forks
from ..conversations import service as conversations
from ..conversations.forks import ForkPending
from ..errors import ApiError, Unauthorized
from ..memory import service as memories
from ..memory.wire import MemoryIn
from ..search import service as search
from . import store

INSTRUCTIONS = (
    "chatmem's long-term memory of this user and their conversations. Search memories before "
    "asking the user something they may have said; add a memory when they state a lasting fact "
    "or preference; forget one when they ask you to."
)


class ApiKeyVerifier:
    """A chatmem API key → the SDK's AccessToken (client_id = the user id); None if invalid."""

    def __init__(self, rt) -> None:
        self.rt = rt

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            p = await auth_service.principal_for_key(self.rt.db, token)
        except Unauthorized:
            return None
        return AccessToken(token=token, client_id=p.id, scopes=[])


def _memory(m: dict) -> dict[str, Any]:
    keys = ("id", "memory_text", "memory_type", "status", "importance", "agent_id", "updated_at")
    out = {k: m.get(k) for k in keys}
    out["sources"] = [
        {"message_id": s["id"], "conversation_id": s["conversation_id"], "excerpt": s["excerpt"]}
        for s in m.get("source_messages") or ()
    ]
    return out


def build(rt) -> MCPServer:
    base = (rt.settings.public_url or f"http://{rt.settings.host}:{rt.settings.port}").rstrip("/")
    server = MCPServer(
        name="chatmem",
        instructions=INSTRUCTIONS,
        token_verifier=ApiKeyVerifier(rt),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            validate_token_resource=False,  # the verifier checks our own keys (no audience)
        ),
    )

    async def principal() -> Principal:
        token = get_access_token()
        if token is None:  # the middleware refuses such requests first
            raise Unauthorized("authentication required")
        return await auth_service.principal_for_key(rt.db, token.token)

    async def call(fn, *args, **kwargs):
        try:
            try:
                return await fn(*args, **kwargs)
            except ForkPending as e:  # a fork still being copied: copied, then asked again
                await forks.settle(rt.db, e.cid)
                return await fn(*args, **kwargs)
        except ApiError as e:  # a tool error the model can read, not a protocol failure
            raise ToolError(f"{e.code}: {e.message}") from None

    _memory_tools(server, rt, principal, call)
    _conversation_tools(server, rt, principal, call)
    return server


def _memory_tools(server: MCPServer, rt, principal, call) -> None:
    """The memory tools: list, search, add and forget the caller's memories."""

    @server.tool()
    async def list_memories(
        status: Literal["active", "query_dependent", "stale", "unknown_current", "disabled"]
        | None = None,
        limit: int = Field(default=50, ge=1, le=200),
    ) -> dict[str, Any]:
        """List what chatmem remembers about the user, newest first (active ones by default)."""
        p = await principal()
        statuses = [status.upper()] if status else ["ACTIVE", "QUERY_DEPENDENT"]
        page = await call(memories.list_memories, rt.db, p, status=statuses, limit=limit)
        return {"memories": [_memory(m) for m in page["items"]]}

    @server.tool()
    async def search_memories(
        query: str = Field(min_length=1, max_length=200),
        limit: int = Field(default=20, ge=1, le=200),
    ) -> dict[str, Any]:
        """Find the user's memories whose text or value contains the query."""
        p = await principal()
        page = await call(memories.list_memories, rt.db, p, q=query, limit=limit)
        return {"memories": [_memory(m) for m in page["items"]]}

    @server.tool()
    async def add_memory(
        text: str = Field(min_length=1, max_length=2000),
        memory_type: str = Field(default="", max_length=80),
        importance: int = Field(default=3, ge=1, le=5),
    ) -> dict[str, Any]:
        """Remember a lasting fact or preference of the user."""
        p = await principal()
        body = MemoryIn(memory_text=text, memory_type=memory_type, importance=importance)
        return _memory(await call(memories.create_memory, rt.db, rt.settings, p, body))

    @server.tool()
    async def forget_memory(
        memory_id: str = Field(min_length=1, max_length=64), purge: bool = False
    ) -> dict[str, Any]:
        """Forget one memory (soft delete; ``purge`` also erases its history)."""
        p = await principal()
        fn = memories.purge_memory if purge else memories.delete_memory
        await call(fn, rt.db, p, memory_id)
        return {"forgotten": memory_id, "purged": purge}


def _conversation_tools(server: MCPServer, rt, principal, call) -> None:
    """The conversation tools: search the caller's conversations and read one message."""

    @server.tool()
    async def search_conversations(
        query: str = Field(min_length=1, max_length=200),
    ) -> dict[str, Any]:
        """Search the user's conversations: matching titles and message snippets."""
        return await call(search.search, rt.db, await principal(), query)

    @server.tool()
    async def get_message(message_id: str = Field(min_length=1, max_length=64)) -> dict[str, Any]:
        """One message of the user's conversations: role, full text, time, conversation."""
        p = await principal()

        async def fetch():
            async with rt.db.read() as c:
                cid = await store.conversation_of(c, p.id, message_id)
            return await conversations.get_message(rt.db, p, cid, message_id)

        m = await call(fetch)
        keys = ("id", "conversation_id", "parent_id", "role", "text", "status", "created_at")
        return {k: m[k] for k in keys}


class McpService:
    """A Runtime service running the SDK's session manager for the app's lifetime.

    The manager is an anyio task group, which must be entered and left by the same task; the
    runtime may start and stop in different tasks (tests do), so it lives in a task of its own."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def _run(self, ready: asyncio.Event) -> None:
        async with self.server.session_manager.run():
            ready.set()
            await self._stop.wait()

    async def start(self) -> None:
        ready = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready), name="mcp-session-manager")
        waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():  # failed to start: surface its error
            self._task.result()

    async def stop(self) -> None:
        if self._task is not None:
            self._stop.set()
            await self._task
            self._task = None


def asgi_app(server: MCPServer):
    return server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


class _AtRoot:
    """``/mcp`` itself, answered as the mount's root ``/mcp/``. A mount alone matches only
    ``/mcp/…``, so Starlette answered ``/mcp`` — the URL the README gives clients — with a 307
    to an absolute ``http://`` address: a client that does not follow redirects failed, and
    behind a TLS proxy the redirect pointed at the wrong scheme."""

    def __init__(self, app, prefix: str) -> None:
        self.app, self.prefix = app, prefix

    async def __call__(self, scope, receive, send) -> None:
        root = scope.get("root_path", "") + self.prefix  # as the mount sets it for its app
        await self.app({**scope, "root_path": root, "path": root + "/"}, receive, send)


def mount(app, mcp_app, prefix: str = "/mcp") -> None:
    """Serve ``mcp_app`` at ``prefix`` and below it, with no redirect for ``prefix`` itself."""
    app.router.routes.append(Route(prefix, _AtRoot(mcp_app, prefix)))
    app.mount(prefix, mcp_app)

"""Mounts the MCP server (server.py) at ``/mcp`` and runs its session manager with the app."""

from __future__ import annotations

from fastapi import APIRouter

from ..runtime import Runtime
from .server import McpService, asgi_app, build

router = APIRouter()  # no HTTP API routes: the MCP app is mounted below
KEY = "mcp.server"


def install(rt: Runtime) -> None:
    server = build(rt)
    rt.extras[KEY] = server
    rt.extras[KEY + ".app"] = asgi_app(server)  # built now: it creates the session manager
    rt.services.append(McpService(server))


def mount(app) -> None:
    app.mount("/mcp", app.state.runtime.extras[KEY + ".app"])

"""The admin listener: ``/metrics``, ``/api/health`` and ``/api/ready`` on a separate address.

Why it exists: Prometheus must scrape every process — job metrics (runs, failures, extraction
and compaction durations) are counted in the workers, which serve no HTTP — and an orchestrator
needs a health probe for a worker too. ``CHATMEM_ADMIN_LISTEN=host:port`` starts this small
server inside ``chatmem serve`` and ``chatmem worker`` (a Runtime service, on the same event
loop), without authentication: bind it to a private interface (in compose: the internal network,
not published).
"""

from __future__ import annotations

import asyncio
import logging
import socket

import uvicorn
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..runtime import Runtime
from . import health, metrics_view

log = logging.getLogger(__name__)


def parse_listen(value: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9464`` for IPv6) → (host, port); ValueError when malformed."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected host:port, got {value!r}")
    return host.strip("[]"), int(port)


def build_app(rt: Runtime) -> Starlette:
    async def metrics(_r: Request) -> Response:
        return Response(await metrics_view.exposition(rt), media_type=CONTENT_TYPE_LATEST)

    async def live(_r: Request) -> Response:
        try:
            return JSONResponse(await health.health(rt))
        except Exception as e:
            return JSONResponse({"ok": False, "database": type(e).__name__}, 503)

    async def ready(_r: Request) -> Response:
        out = await health.readiness(rt)
        return JSONResponse(out, 200 if out["ok"] else 503)

    return Starlette(
        routes=[
            Route("/metrics", metrics),
            Route("/api/health", live),
            Route("/api/ready", ready),
        ]
    )


class AdminListener:
    """A Runtime service running the admin app on ``address`` (uvicorn's startup, main loop and
    shutdown driven by hand: its ``serve()`` would take over the process's signal handlers)."""

    def __init__(self, rt: Runtime, address: str) -> None:
        self.host, self.port = parse_listen(address)
        self.config = uvicorn.Config(
            build_app(rt), log_config=None, access_log=False, lifespan="off"
        )
        self.server = uvicorn.Server(self.config)
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))  # a taken port fails the start, loudly
        except OSError as e:
            sock.close()
            raise OSError(f"admin listener: cannot bind {self.host}:{self.port}: {e}") from e
        sock.set_inheritable(True)
        if not self.config.loaded:
            self.config.load()
        self.server.lifespan = self.config.lifespan_class(self.config)
        await self.server.startup(sockets=[sock])
        self._task = asyncio.create_task(self.server.main_loop(), name="admin-listener")
        log.info("admin listener on %s:%s", self.host, self.port)

    async def stop(self) -> None:
        if self._task is not None:
            self.server.should_exit = True
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
            await self.server.shutdown()

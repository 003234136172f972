"""The composition root: builds the Runtime and the FastAPI application for one process.

``create_runtime(settings)`` is the one place where the process's parts are constructed and wired —
the provider registry, the running-turns state, the rate limiters, job handlers by kind, memory's
turn hooks, the embedder, the background services (sweeper, job worker) — and
``create_app(settings)`` adds the middleware, routers, error handlers and the lifespan that starts
and stops those services. Nothing is created at import time.
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import edge, routefilter
from .admin import routes as admin_routes
from .agents import routes as agents_routes
from .auth import routes as auth_routes
from .auth.cache import PrincipalCache
from .auth.throttle import LoginGuard
from .compat import envelope
from .compat import routes as compat_routes
from .config import Settings, get_settings
from .context import manage as context_manage
from .context import routes as context_routes
from .contracts import openapi
from .conversations import followups, forks
from .conversations import routes as conversations_routes
from .conversations.forkwait import ForkWait
from .db import faults
from .db.engine import Database
from .edge.bodylimit import BodyTooLarge
from .edge.ratelimit import Throttle
from .embeddings import jobs as embedding_jobs
from .embeddings import registry as embedders
from .embeddings import routes as embeddings_routes
from .embeddings import service as embedding_service
from .errors import ApiError
from .feedback import routes as feedback_routes
from .generation import routes as generation_routes
from .generation import titles
from .generation.state import GenerationState
from .generation.sweeper import Sweeper
from .jobs import routes as jobs_routes
from .jobs.worker import Worker
from .mcp_server import server as mcp_server
from .memory import hooks as memory_hooks
from .memory import routes as memory_routes
from .observability.middleware import RequestTelemetry
from .observability.telemetry import Telemetry
from .openai_compat import routes as openai_compat_routes
from .ops import routes as ops_routes
from .ops.admin import AdminListener
from .portability import exporter as portability_exports
from .portability import importer as portability_imports
from .portability import routes as portability_routes
from .projects import routes as projects_routes
from .providers.registry import Registry
from .runtime import Runtime
from .search import config_check
from .search import routes as search_routes
from .sharing import routes as sharing_routes
from .threads import routes as threads_routes
from .web import routes as web_routes
from .workspaces import routes as workspaces_routes

#: The HTTP routers, in order (order matters only for route precedence).
ROUTERS = [
    ops_routes.router,
    auth_routes.router,
    conversations_routes.router,
    generation_routes.messages_router,
    projects_routes.router,
    agents_routes.router,
    generation_routes.router,
    context_routes.router,
    threads_routes.router,
    jobs_routes.router,
    admin_routes.router,
    compat_routes.router,
    memory_routes.router,
    sharing_routes.router,
    feedback_routes.router,
    search_routes.router,
    openai_compat_routes.router,
    embeddings_routes.router,
    portability_routes.router,
    workspaces_routes.router,
    web_routes.router,
]


def _error_json(status: int, code: str, message: str, details=None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": details}}, status_code=status
    )


def _validation_details(exc: RequestValidationError) -> list[dict]:
    return [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]


def _allowed_methods(request: Request) -> list[str]:
    """The methods ``/openapi.json`` documents for this path (Starlette's 405 names only the
    first matching route's; every route here serves one method). Of the documented paths that
    match, the most specific (fewest parameters) names the resource: ``/api/workspace-invites/join``
    is the join route's, not an invite id for ``DELETE /api/workspace-invites/{iid}``."""
    index = getattr(request.app.state, "allow_index", None)
    if index is None:
        index = [
            (
                re.compile(re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path))),
                path.count("{"),
                set(ops),
            )
            for path, ops in request.app.openapi().get("paths", {}).items()
        ]
        request.app.state.allow_index = index
    path = request.url.path
    matching = [(params, ops) for rx, params, ops in index if rx.fullmatch(path)]
    fewest = min((params for params, _ in matching), default=0)
    return sorted({m.upper() for params, ops in matching if params == fewest for m in ops})


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError):
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers or None)

    @app.exception_handler(RequestValidationError)
    async def _validation(_req: Request, exc: RequestValidationError):
        details = _validation_details(exc)
        too_long = any(d["type"] in ("string_too_long", "too_long") for d in details)
        msg = "request validation failed" + (" (a field is too long)" if too_long else "")
        return _error_json(422, "validation_error", msg, details)

    async def _fault(_req: Request, exc: Exception):
        # Safety nets behind the request models (NUL, lone surrogates) and database faults:
        # a stable code and message (503 database_unavailable + Retry-After when transient),
        # never driver text. Anything else is a bug: re-raised, a logged 500.
        err = faults.api_error(exc)
        if err is None:
            raise exc
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers or None)

    for exc_type in (DBAPIError, SQLAlchemyError, UnicodeEncodeError, ConnectionError, OSError):
        app.add_exception_handler(exc_type, _fault)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, exc: StarletteHTTPException):
        codes = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
        code = codes.get(exc.status_code, "http_error")
        details = {"limit": exc.limit} if isinstance(exc, BodyTooLarge) else None
        r = _error_json(exc.status_code, code, str(exc.detail), details)
        r.headers.update(exc.headers or {})
        if exc.status_code == 405 and (allowed := _allowed_methods(_req)):
            r.headers["Allow"] = ", ".join(allowed)  # every method of the path (RFC 9110)
        return r


def create_runtime(settings: Settings, *, db: Database | None = None) -> Runtime:
    """The process's Runtime with every part wired but no HTTP app (what ``chatmem worker`` runs;
    tests build it too). Services start in list order and stop in reverse."""
    db_ = db or Database(settings.database_url)
    telemetry = Telemetry.from_settings(settings)  # refuses tracing without the [otel] extra
    telemetry.tracing.instrument_engine(db_.engine, db_.dialect)
    rt = Runtime(
        settings=settings,
        db=db_,
        providers=Registry(settings),
        generation=GenerationState(db_, settings),
        login_guard=LoginGuard.from_settings(settings),
        share_limiter=Throttle("public-share", settings.public_share_rate_per_ip),
        telemetry=telemetry,
        principals=PrincipalCache(settings.auth_cache_s),
    )
    rt.job_handlers.update(
        {
            followups.FOLLOWUPS: followups.followups_job,
            "title": titles.title_job,
            "compaction": context_manage.compaction_job,
            "memory.extract": memory_hooks.extract_job,
            embedding_jobs.KIND_CONVERSATION: embedding_jobs.embed_conversation_job,
            forks.KIND: forks.fork_copy_job,
            embedding_jobs.KIND_MEMORIES: embedding_jobs.embed_memories_job,
            portability_imports.IMPORT_JOB: portability_imports.import_job,
            portability_exports.EXPORT_JOB: portability_exports.export_job,
        }
    )
    rt.before_turn = memory_hooks.before_turn
    rt.memory_source = memory_hooks.make_memory_source(rt)
    # first: refuse a search configuration the index was not built with (search/config_check)
    rt.services.append(config_check.StartupCheck(db_, settings.search_config))
    rt.services.append(rt.generation)
    rt.services.append(Sweeper(rt))
    if settings.run_worker:  # `chatmem serve` unless --no-worker, and `chatmem worker`
        rt.services.append(Worker(rt))
    mcp = mcp_server.build(rt)
    rt.mcp_app = mcp_server.asgi_app(mcp)  # built now: it creates the session manager
    rt.services.append(mcp_server.McpService(mcp))
    # Embeddings are optional: an unknown CHATMEM_EMBEDDER or a refused configuration raises here,
    # before the server accepts a request; none configured = no vectors, no jobs scheduled.
    embedder = embedders.load(settings)
    if embedder is not None:
        rt.embeddings = embedding_service.EmbeddingService(settings, embedder)
        embedding_service.enable(rt.db, settings)
        rt.services.append(embedding_service.Lifecycle(rt.db, settings, rt.embeddings))
    if settings.admin_listen:  # /metrics, health and ready on a private address (ops/admin.py)
        rt.services.append(AdminListener(rt, settings.admin_listen))
    return rt


class RejectNulInUrl:
    """ASGI middleware: a NUL byte in the path or query string answers 400 before any route runs
    (bodies are checked by the request models). PostgreSQL text cannot hold NUL; without this a
    crafted id such as ``%00`` became a 500 on PostgreSQL and a silent miss on SQLite."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and (
            "\x00" in scope.get("path", "")
            or b"%00" in scope.get("query_string", b"")
            or b"\x00" in scope.get("query_string", b"")
        ):
            message = "NUL characters are not allowed in URLs"
            if scope.get("path", "").startswith("/rpc"):
                response = envelope.fail(Request(scope), 400, "bad_request", message)
            else:
                response = _error_json(400, "bad_request", message)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    rt = create_runtime(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        await rt.start()
        try:
            yield
        finally:
            await rt.stop()

    # docs_url=None: /docs is served offline by the web module (FastAPI's own loads a CDN)
    app = FastAPI(
        title="chatmem", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.runtime = rt
    # innermost: a read that reached a fork still being copied is answered again once copied
    app.add_middleware(ForkWait, db_of=lambda: rt.db)
    edge.install(app, settings, RejectNulInUrl)
    # outermost: every answer (a 413 from the edge, a preflight, a 404) gets a request id, a
    # log line, metrics and a span (observability/middleware.py)
    app.add_middleware(RequestTelemetry, telemetry=rt.telemetry)
    install_error_handlers(app)

    for router in ROUTERS:
        app.include_router(router)
    if rt.mcp_app is not None:  # the MCP server (mcp_server/server.py)
        mcp_server.mount(app, rt.mcp_app)
    web_routes.mount(app)  # the web UI's static files
    openapi.install(app)
    routefilter.install(app)  # last: every route is in (a router's regex covers its routes)
    return app

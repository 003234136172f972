"""The FastAPI application factory: routers, error handlers, and the lifespan that runs services.

``create_app(settings)`` builds everything for one process; nothing is created at import time.
Feature packages contribute a router (and optionally background services) through ``FEATURES``.
"""

from __future__ import annotations

import importlib
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import edge
from .compat import envelope
from .config import Settings, get_settings
from .contracts import openapi
from .contracts.base import Output
from .db import faults
from .db.engine import Database
from .edge.bodylimit import BodyTooLarge
from .errors import ApiError
from .runtime import Runtime

#: Modules exposing ``router`` (an APIRouter) and optionally ``install(runtime)`` to register
#: background services or per-runtime singletons. Order matters only for route precedence.
FEATURES = [
    "chatmem.auth.routes",
    "chatmem.conversations.routes",
    "chatmem.projects.routes",
    "chatmem.agents.routes",
    "chatmem.generation.routes",
    "chatmem.context.routes",
    "chatmem.threads.routes",
    "chatmem.jobs.routes",
    "chatmem.compat.routes",
    "chatmem.memory.routes",
    "chatmem.sharing.routes",
    "chatmem.feedback.routes",
    "chatmem.search.routes",
    "chatmem.openai_compat.routes",
    "chatmem.mcp_server.routes",
    "chatmem.embeddings.routes",
    "chatmem.web.routes",
]


class Health(Output):
    ok: bool
    database: str = Field(description="sqlite | postgresql")


def _error_json(status: int, code: str, message: str, details=None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": details}}, status_code=status
    )


def _validation_details(exc: RequestValidationError) -> list[dict]:
    out = []
    for e in exc.errors():
        out.append(
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        )
    return out


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
        return _error_json(exc.status_code, code, str(exc.detail), details)


def _feature_modules() -> list:
    return [importlib.import_module(name) for name in FEATURES]


def create_runtime(settings: Settings) -> Runtime:
    """A Runtime with every feature installed (job handlers, services) but no HTTP app:
    what ``chatmem worker`` runs."""
    rt = Runtime(settings=settings, db=Database(settings.database_url))
    for m in _feature_modules():
        if hasattr(m, "install"):
            m.install(rt)
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
    modules = _feature_modules()

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
    edge.install(app, settings, RejectNulInUrl)
    install_error_handlers(app)

    @app.get("/api/health", tags=["meta"], response_model=Health)
    async def health():
        async with rt.db.read() as c:
            await c.exec_driver_sql("SELECT 1")
        return {"ok": True, "database": rt.db.dialect}

    for m in modules:
        app.include_router(m.router)
        if hasattr(m, "mount"):  # static files and other sub-apps
            m.mount(app)
    openapi.install(app)
    return app

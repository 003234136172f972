"""The error contract: the body every native error answers with, and OpenAPI declarations of it.

Why it exists: a client generated from ``/openapi.json`` must know every status a route can answer
and that each carries ``{"error": {"code", "message", "details"}, "request_id"}`` (not FastAPI's
default 422 shape; the request id is added by observability/middleware.py). Routers declare the statuses they can answer with ``errors(...)``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import Output


class ErrorInfo(Output):
    code: str = Field(description="a stable machine-readable code, e.g. not_found, conflict")
    message: str = Field(description="a human-readable explanation")
    details: Any = Field(
        default=None,
        description="extra structured facts (validation errors, limits, the running message id …)",
    )


class ErrorResponse(Output):
    """Every native error: a proper HTTP status and this body."""

    error: ErrorInfo
    request_id: str | None = Field(
        default=None,
        description="this request's id, also in the X-Request-ID header and the server's logs "
        "(quote it when reporting a problem)",
    )


#: What each status means across the native API (one description per status keeps the document
#: readable; the ``code`` in the body says which case it was).
MEANING = {
    400: "Bad request: an invalid cursor, Last-Event-ID, query or URL (e.g. NUL characters)",
    401: "Missing or invalid credentials (a bearer API key or the session cookie)",
    403: "Forbidden: a cookie-authenticated write without its CSRF token, an admin-only route, "
    "or a workspace action your role in it does not allow",
    404: "Not found (anything owned by another user is reported as not found)",
    409: "Conflict: a turn is already running on this branch, a message is streaming, a name is taken",
    413: "The content exceeds the configured size limit",
    415: "Unsupported media type (e.g. a screenshot that is neither PNG nor JPEG)",
    422: "Validation failed: the body or a parameter does not match the schema",
    429: "Too many requests: the concurrent-generation cap or a rate limit",
    502: "The model failed (the turn is stored as failed; retry regenerates it)",
}

#: Statuses any authenticated native route can answer.
AUTHED = (400, 401, 403, 422)


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries declaring ``ErrorResponse`` for ``statuses``."""
    return {s: {"model": ErrorResponse, "description": MEANING[s]} for s in sorted(set(statuses))}

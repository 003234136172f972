"""Seed 000's (docs/specs.md) response envelope for every ``/rpc`` response, errors included.

Success: ``{"ok": true, "data": …, "meta": {"requestId", "timestamp"}}``; failure: ``{"ok": false,
"error": {"code", "message", "details"}, "meta": …}``. ``EnvelopeRoute`` (the route class of the
``/rpc`` router) turns everything a route can raise — our ``ApiError``s, request validation errors
(400, as the seed's zod validator answers), authentication failures raised by the auth dependency,
HTTP errors — into a failure envelope, so a ``/rpc`` client never sees the native error shape.
Unknown ``/rpc`` paths are answered by a catch-all route in routes.py with the same envelope.

``meta.requestId`` is the caller's ``X-Request-ID`` when it is a sane token, else a new id; it is
echoed in the ``X-Request-ID`` response header. ``meta.timestamp`` is ISO 8601 UTC with milliseconds.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..db import faults
from ..db.ids import new_id
from ..errors import ApiError

log = logging.getLogger(__name__)

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "validation_error",
    429: "too_many_requests",
}


def request_id(request: Request) -> str:
    """The id of this request (stable for its lifetime): the one the request middleware gave it
    (observability/middleware.py, also in the logs), else the caller's or a new one."""
    rid = getattr(request.state, "request_id", None)
    if rid is None:
        sent = request.headers.get("x-request-id", "")
        rid = sent if _REQUEST_ID.match(sent) else new_id("req")
        request.state.request_id = rid
    return rid


def meta(request: Request) -> dict:
    ts = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"requestId": request_id(request), "timestamp": ts}


def _dump(data: Any) -> Any:
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    return data


def ok(request: Request, data: Any, status: int = 200) -> JSONResponse:
    """A success envelope around ``data`` (a contract model or plain JSON)."""
    return JSONResponse(
        {"ok": True, "data": _dump(data), "meta": meta(request)},
        status_code=status,
        headers={"x-request-id": request_id(request)},
    )


def fail(
    request: Request,
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {
        "ok": False,
        "error": {"code": code, "message": message, "details": details},
        "meta": meta(request),
    }
    return JSONResponse(
        body, status_code=status, headers={**(headers or {}), "x-request-id": request_id(request)}
    )


def validation_details(exc: RequestValidationError) -> list[dict]:
    """zod-like issue list: path (without the 'body'/'query' prefix), message, type."""
    out = []
    for e in exc.errors():
        loc = list(e.get("loc", ()))
        if loc and loc[0] in ("body", "query", "path", "header"):
            loc = loc[1:]
        out.append({"path": loc, "message": e.get("msg", ""), "type": e.get("type", "")})
    return out


def failure_for(request: Request, exc: Exception) -> JSONResponse:
    """Map any exception a ``/rpc`` route raises to its failure envelope."""
    if isinstance(exc, ApiError):
        return fail(request, exc.status, exc.code, exc.message, exc.details, exc.headers)
    if isinstance(exc, RequestValidationError):
        return fail(request, 400, "validation_error", "Invalid request", validation_details(exc))
    if isinstance(exc, StarletteHTTPException):
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return fail(request, exc.status_code, code, str(exc.detail))
    err = faults.api_error(exc)  # NUL / surrogate safety nets, database faults (503)
    if err is not None:
        status = 400 if err.status == 422 else err.status  # seed 000 answers 400 to bad input
        return fail(request, status, err.code, err.message, err.details, err.headers)
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return fail(request, 500, "internal_error", "Internal server error")


class EnvelopeRoute(APIRoute):
    """An APIRoute whose every failure is answered in the seed-000 envelope."""

    def get_route_handler(self) -> Callable:
        inner = super().get_route_handler()

        async def handler(request: Request) -> Response:
            request_id(request)
            try:
                response = await inner(request)
            except Exception as exc:  # every failure of a /rpc route is enveloped
                return failure_for(request, exc)
            response.headers.setdefault("x-request-id", request_id(request))
            return response

        return handler

"""The request middleware: request id, one log line, metrics and a span for every HTTP request.

Why it exists: these four belong to the request as a whole — including answers that never reach
a route (a 413 from the body limit, a CORS preflight, a 404) — so they live in the outermost
middleware, not in each route.

- **Request id**: the caller's ``X-Request-ID`` when it is a sane token (so a proxy's id carries
  through), else a new ``req_…`` id. It is in ``request.state.request_id``, bound to every log
  record of the request (and of a turn it starts), in the ``X-Request-ID`` response header, and
  in every native error body as ``request_id`` beside ``error`` (``{"error": {"code",
  "message", "details"}, "request_id"}``, declared in the OpenAPI error schema). ``/rpc`` carries it in its envelope's
  ``meta.requestId`` instead; the OpenAI-compatible ``/v1`` errors keep OpenAI's shape.
- **Metrics**: requests by method, route *template* (``/api/conversations/{cid}``, never the raw
  path; ``unmatched`` for 404s outside any route) and status; latency to the response's first
  byte (a stream's length is not latency); requests in flight; open SSE streams.
- **Log line**: ``chatmem.http`` logs ``request`` once the response is complete, with method,
  route, path, status, duration and time to first byte. Probes (health, ready, metrics) log at
  debug level so they do not drown the log.
- **Unhandled exceptions** are logged with the request id and answered ``500 internal_error`` in
  the native error shape (never a bare text page).
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

from opentelemetry.trace import INVALID_SPAN
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..db.ids import new_id
from . import logs
from .telemetry import Telemetry

log = logging.getLogger(logs.HTTP_LOGGER)

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
HEADER = b"x-request-id"
#: paths polled by load balancers and Prometheus: their request lines log at debug level
PROBES = frozenset({"/api/health", "/api/ready", "/metrics"})
#: the span of every request while tracing is off: its methods do nothing
NO_SPAN = INVALID_SPAN
#: error bodies larger than this are passed through untouched (native errors are tiny)
MAX_ERROR_BODY = 64 * 1024


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    for k, v in headers:
        if k.lower() == HEADER:
            sent = v.decode("latin-1")
            if REQUEST_ID.match(sent):
                return sent
            break
    return new_id("req")


def route_label(scope: Scope) -> str:
    """The route template that answered (FastAPI puts the route in the scope), a mount's prefix
    for mounted apps (``/assets/*``, ``/mcp/*``), or ``unmatched``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    root = scope.get("root_path", "") or ""
    base = scope.get("chatmem_root_path", "")
    if root and root != base:
        return f"{root[len(base) :]}/*"
    return "unmatched"


def with_request_id(body: bytes, rid: str) -> bytes | None:
    """``body`` with ``request_id`` added beside ``error`` when it is a native error body (only
    ``error``, holding exactly code, message and details), else None."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, dict) or set(data) != {"error"}:
        return None
    if set(err) != {"code", "message", "details"}:
        return None
    data["request_id"] = rid
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


class RequestTelemetry:
    def __init__(self, app: ASGIApp, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry
        self.m = telemetry.metrics
        # the labelled children of the two per-request metrics, as ``labels()`` returns them
        # (it takes a lock and normalises the values on every call); never removed, so the
        # same objects prometheus_client exports
        self._counts: dict[tuple[str, str, int], Any] = {}
        self._durations: dict[tuple[str, str], Any] = {}

    def record(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request and observe its time to first byte."""
        count = self._counts.get((method, route, status))
        if count is None:
            count = self.m.http_requests.labels(method, route, str(status))
            self._counts[(method, route, status)] = count
        duration = self._durations.get((method, route))
        if duration is None:
            duration = self.m.http_duration.labels(method, route)
            self._durations[(method, route)] = duration
        count.inc()
        duration.observe(seconds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await _Exchange(self, scope, receive, send).run()


class _Exchange:
    """One request/response pair passing through the middleware."""

    def __init__(self, mw: RequestTelemetry, scope: Scope, receive: Receive, send: Send) -> None:
        self.mw, self.scope, self.receive, self.send = mw, scope, receive, send
        self.rid = request_id_from(scope.get("headers") or [])
        self.t0 = time.perf_counter()
        self.ttfb: float | None = None
        self.status = 500
        self.sse = False
        self.error_start: Message | None = None  # a held error response start (body rewrite)
        self.error_body = b""

    async def run(self) -> None:
        scope, mw = self.scope, self.mw
        scope.setdefault("state", {})["request_id"] = self.rid
        scope["chatmem_root_path"] = scope.get("root_path", "") or ""
        tokens = logs.bind(request_id=self.rid)
        span = self._server_span()
        mw.m.http_in_flight.inc()
        try:
            if span is NO_SPAN:
                await mw.app(scope, self.receive, self._send)
            else:
                with mw.telemetry.tracing.use(span):
                    await mw.app(scope, self.receive, self._send)
        except Exception as exc:
            log.error(
                "unhandled error on %s %s",
                scope.get("method"),
                scope.get("path"),
                exc_info=exc,
            )
            span.record_exception(exc)
            if self.ttfb is None:
                await self._internal_error()
        finally:
            mw.m.http_in_flight.dec()
            if self.sse:
                mw.m.sse_streams.dec()
            self._finish(span)
            logs.unbind(tokens)

    def _server_span(self) -> Any:
        """The request's span, continuing the caller's trace; with tracing off, the no-op span
        without building one (the caller's ``traceparent`` would only ever reach no-op spans)."""
        tracing, scope = self.mw.telemetry.tracing, self.scope
        if not tracing.enabled:
            return NO_SPAN
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        return tracing.server_span(
            f"HTTP {scope.get('method', '')}",
            headers,
            **{"http.request.method": scope.get("method", ""), "url.path": scope.get("path", "")},
        )

    async def _send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            await self._start(message)
            return
        if message["type"] == "http.response.body" and self.error_start is not None:
            self.error_body += message.get("body", b"")
            if message.get("more_body") and len(self.error_body) <= MAX_ERROR_BODY:
                return
            await self._flush_error(more=bool(message.get("more_body")))
            return
        await self.send(message)

    async def _start(self, message: Message) -> None:
        self.ttfb = time.perf_counter()
        self.status = int(message["status"])
        headers = []
        ctype = None  # the first content-type's value
        for k, v in message.get("headers", ()):
            name = k.lower()
            if name == HEADER:
                continue
            if ctype is None and name == b"content-type":
                ctype = v
            headers.append((k, v))
        headers.append((HEADER, self.rid.encode()))
        message = {**message, "headers": headers}
        ctype = ctype or b""
        if ctype.startswith(b"text/event-stream"):
            self.sse = True
            self.mw.m.sse_streams.inc()
        if self.status >= 400 and ctype.startswith(b"application/json"):
            self.error_start = message  # held until the body is seen (it gains the id)
            return
        await self.send(message)

    async def _flush_error(self, *, more: bool) -> None:
        start, body = self.error_start, self.error_body
        assert start is not None
        self.error_start = None
        rewritten = None if more else with_request_id(body, self.rid)
        if rewritten is not None:
            body = rewritten
            start = {
                **start,
                "headers": [
                    *[(k, v) for k, v in start["headers"] if k.lower() != b"content-length"],
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        await self.send(start)
        await self.send({"type": "http.response.body", "body": body, "more_body": more})

    async def _internal_error(self) -> None:
        body = json.dumps(
            {
                "error": {
                    "code": "internal_error",
                    "message": "internal server error",
                    "details": None,
                },
                "request_id": self.rid,
            }
        ).encode()
        self.status = 500
        self.ttfb = time.perf_counter()
        await self.send(
            {
                "type": "http.response.start",
                "status": 500,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (HEADER, self.rid.encode()),
                ],
            }
        )
        await self.send({"type": "http.response.body", "body": body})

    def _finish(self, span: Any) -> None:
        scope = self.scope
        method = scope.get("method", "")
        route = route_label(scope)
        end = time.perf_counter()
        first = self.ttfb if self.ttfb is not None else end
        self.mw.record(method, route, self.status, first - self.t0)
        if span is not NO_SPAN:  # with tracing off, its methods do nothing
            span.update_name(f"{method} {route}")
            span.set_attribute("http.route", route)
            span.set_attribute("http.response.status_code", self.status)
            if self.status >= 500:
                span.set_status(self.mw.telemetry.tracing.error_status(str(self.status)))
            span.end()
        path = scope.get("path", "")
        level = logging.DEBUG if path in PROBES else logging.INFO
        if self.status >= 500:
            level = logging.ERROR
        log.log(
            level,
            "request",
            extra={
                "method": method,
                "route": route,
                "path": path,
                "status": self.status,
                "duration_ms": round((end - self.t0) * 1000, 2),
                "ttfb_ms": round((first - self.t0) * 1000, 2),
                "client": (scope.get("client") or ("", 0))[0],
            },
        )

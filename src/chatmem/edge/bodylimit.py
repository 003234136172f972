"""The request-body limit: 413 before a large body is buffered.

A declared ``Content-Length`` over the limit is refused before a byte of the body is read; a
chunked (or lying) body is counted as it arrives and refused the moment it passes the limit, so
memory per request stays bounded by the limit whatever a client sends. ``multipart/form-data``
(uploads) has its own, larger cap; the multipart parser keeps its per-part limits on top. Routes
named in ``large`` (path prefix → limit: the import upload, which streams to disk) have their own.

Refusing mid-body raises ``BodyTooLarge`` from ``receive``: it is an HTTPException, which
FastAPI's body parsing lets through unchanged (any other exception there becomes a 400), and the
app's handlers turn it into the JSON error (native or /rpc envelope). If a response had already
started, the connection is simply dropped.
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes")
        self.limit = limit


def error_body(path: str, limit: int) -> bytes:
    """The 413 body in the path's error shape (native, or the /rpc envelope)."""
    err = {
        "code": "payload_too_large",
        "message": f"request body larger than {limit} bytes",
        "details": {"limit": limit},
    }
    if path.startswith("/rpc"):
        body = {"ok": False, "error": err, "meta": {"requestId": "", "timestamp": ""}}
    else:
        body = {"error": err}
    return json.dumps(body).encode()


class BodyLimit:
    def __init__(
        self, app, *, max_body: int, max_upload: int, large: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.max_upload = max_upload
        self.large = dict(large or {})

    def _limit(self, scope) -> int:
        path = scope.get("path", "")
        for prefix, limit in self.large.items():
            if path == prefix and scope.get("method") == "POST":
                return limit
        for k, v in scope.get("headers", ()):
            if k == b"content-type" and v.lower().startswith(b"multipart/form-data"):
                return self.max_upload
        return self.max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _refuse(scope, send, limit)
                    return
        seen = 0

        async def counted_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted_receive, send)


async def _refuse(scope, send, limit: int) -> None:
    body = error_body(scope.get("path", ""), limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

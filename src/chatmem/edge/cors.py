"""CORS for web clients on other origins (``CHATMEM_CORS_ORIGINS``; none by default).

Why it exists: a browser app served from another origin (an AI SDK front-end, Open WebUI in a
browser, a dashboard) can call chatmem only if preflights are answered. The policy:

- ``CHATMEM_CORS_ORIGINS`` is a comma-separated list of exact origins
  (``https://app.example.com``). Those get ``Access-Control-Allow-Credentials: true``, so a page
  there may send the session cookie (writes still need the X-CSRF-Token) or a bearer key.
- ``*`` in the list admits any other origin **without** credentials (bearer keys only — a
  wildcard never lets a foreign page ride the user's cookie).
- Unlisted origins get no CORS headers at all: the browser blocks the response.

Starlette's CORSMiddleware does the protocol; this picks the credentialed or the anonymous
instance by the request's ``Origin``.
"""

from __future__ import annotations

from typing import Any

from starlette.middleware.cors import CORSMiddleware

#: Response headers a cross-origin client may read: paging, request ids, the conversation and
#: message a /v1 turn went to, the ids of a /rpc turn (to resume or rate it), Retry-After.
EXPOSE = [
    "X-Has-More",
    "X-Next-Before",
    "X-Request-ID",
    "X-Chatmem-Conversation",
    "X-Chatmem-Message",
    "X-User-Message-Id",
    "X-Assistant-Message-Id",
    "Retry-After",
]
MAX_AGE_S = 600


def parse_origins(raw: str) -> tuple[list[str], bool]:
    """(exact origins, whether ``*`` admits any other origin without credentials)."""
    items = [o.strip().rstrip("/") for o in raw.split(",") if o.strip()]
    return [o for o in items if o != "*"], "*" in items


class Cors:
    """ASGI middleware: listed origins with credentials, ``*`` without, others untouched."""

    def __init__(self, app, origins: str) -> None:
        self.app = app
        listed, anyone = parse_origins(origins)
        self.listed = frozenset(listed)
        common: dict[str, Any] = dict(
            allow_methods=["*"], allow_headers=["*"], expose_headers=EXPOSE
        )
        self.trusted = CORSMiddleware(
            app, allow_origins=listed, allow_credentials=True, max_age=MAX_AGE_S, **common
        )
        self.public = (
            CORSMiddleware(
                app, allow_origins=["*"], allow_credentials=False, max_age=MAX_AGE_S, **common
            )
            if anyone
            else None
        )

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = next((v for k, v in scope["headers"] if k == b"origin"), None)
        if origin is None:
            await self.app(scope, receive, send)
        elif origin.decode("latin-1") in self.listed:
            await self.trusted(scope, receive, send)
        elif self.public is not None:
            await self.public(scope, receive, send)
        else:
            await self.app(scope, receive, send)

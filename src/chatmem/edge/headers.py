"""Security headers on every response, and the client's real address behind trusted proxies.

- ``Content-Security-Policy`` (``settings.content_security_policy``): the web app loads only its
  own scripts, styles and connections — no inline script, no framing (``frame-ancestors
  'none'``) — so an HTML injection cannot run code or be clickjacked. JSON responses carry it
  too (harmless, and a JSON body opened as a page can then run nothing). HTML pages that set
  their own policy keep it (the web module's, ``/docs`` included: Swagger UI from bundled files,
  no CDN, no inline script — web/csp.py).
- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (share links carry their
  token in the URL), ``X-Frame-Options: DENY`` for old browsers, ``Cross-Origin-Opener-Policy``,
  and ``Strict-Transport-Security`` when the request came over https.

``install`` (edge/__init__.py) applies uvicorn's ProxyHeadersMiddleware for the configured proxies only:
``X-Forwarded-For`` then gives the client IP (rate limits) and ``X-Forwarded-Proto: https`` the
scheme (Secure cookies, HSTS). From any other peer those headers are ignored — a client can
not claim another address or https.
"""

from __future__ import annotations

STATIC_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
HSTS = (b"strict-transport-security", b"max-age=31536000; includeSubDomains")


class SecurityHeaders:
    def __init__(self, app, csp: str) -> None:
        self.app = app
        self.csp = csp.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = self.csp
        https = scope.get("scheme") == "https"

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                extra = [*STATIC_HEADERS, (b"content-security-policy", csp)]
                if https:
                    extra.append(HSTS)
                headers += [(k, v) for k, v in extra if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def trusted_hosts(trusted: str) -> list[str]:
    """The configured proxies (comma-separated IPs/CIDRs, ``*``) as a list; [] = none."""
    return [h.strip() for h in trusted.split(",") if h.strip()]


def client_ip(request) -> str:
    """The caller's address: the peer, or what a trusted proxy forwarded (see above)."""
    return request.client.host if request.client else "unknown"


def is_https(request) -> bool:
    return request.url.scheme == "https"

"""The HTTP edge: what every request passes before (and after) a route — trusted-proxy headers,
security headers, the request-body limit, NUL-free URLs. Pure ASGI middleware, no routes;
``install`` puts them on an app in the right order (outermost first: proxy headers, so that the
scheme and client address are right for everything after; security headers, so that even a 413
carries them; the body limit; then the URL check). CORS (cors.py), when configured, wraps them
all so that preflights are answered first and every answer carries its headers."""

from __future__ import annotations

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from .bodylimit import BodyLimit
from .cors import Cors
from .headers import SecurityHeaders, trusted_hosts


def install(app, settings, *inner) -> None:
    """Add the edge middleware to ``app``; ``inner`` middleware classes go innermost."""
    for cls in inner:
        app.add_middleware(cls)
    app.add_middleware(
        BodyLimit,
        max_body=settings.max_body_bytes,
        max_upload=settings.max_upload_bytes,
        large={"/api/imports": settings.max_import_bytes},
    )
    app.add_middleware(SecurityHeaders, csp=settings.content_security_policy)
    hosts = trusted_hosts(settings.trusted_proxies)
    if hosts:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=hosts)
    if settings.cors_origins.strip():  # outermost: preflights and every answer, errors included
        app.add_middleware(Cors, origins=settings.cors_origins)

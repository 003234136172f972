"""A one-regex pre-check per included router, so a request does not walk routers it cannot match.

Why it exists: FastAPI (0.165) keeps each ``include_router`` as one top-level entry and matches a
request by asking those entries in turn; each one asks every route it holds, with per-route
scope bookkeeping (~2–6 µs a route on this machine). ``POST /api/conversations/{cid}/messages``
walked the health, auth and conversation routers first (~25 routes, ~0.1 ms of CPU per request,
as much as a request's whole log line and metrics), and a 404 walked all ~130 routes three
times (the match, the trailing-slash retry, the low-priority pass: ~0.9 ms).

``install(app)`` gives each top-level included router the alternation of its routes' path
regexes (the same compiled patterns FastAPI matches, with the prefixes applied; parameter names
dropped). When the request's path matches none of them, the router answers ``Match.NONE`` at
once — exactly what its own walk would answer, since a route whose path regex does not match
answers ``NONE`` whatever the method or scope type. Otherwise FastAPI's own matching runs
unchanged, so which route answers, 405s, path parameters and the scope it sets are FastAPI's.
A router holding anything not matched by a path regex alone (a frontend route group, a host
route) is left as it is; one whose routes change after ``install`` (its routes version moves) is
checked by the full walk again until the next ``install``.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette import routing
from starlette._utils import get_route_path
from starlette.routing import Match

#: a named group of a compiled path (``(?P<cid>[^/]+)``): unnamed in the alternation, where two
#: routes' ``cid`` would clash
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
#: the route types matched on their path regex alone (``Host`` matches on the host header)
_PATH_ROUTES = (routing.Route, routing.WebSocketRoute, routing.Mount, APIRoute, APIWebSocketRoute)


def _path_pattern(ctx: Any) -> str | None:
    """The path regex ``ctx`` (an effective route) is matched on, its groups unnamed; None when
    the route is not decided by its path regex alone."""
    route = ctx.starlette_route or ctx.original_route
    if not isinstance(route, _PATH_ROUTES):
        return None
    rx = ctx.path_regex if ctx.starlette_route is None else route.path_regex
    if not isinstance(rx, re.Pattern) or rx.flags & ~re.UNICODE or "(?P=" in rx.pattern:
        return None
    return _NAMED_GROUP.sub("(?:", rx.pattern)


def _method_pattern(ctx: Any, path: str) -> str | None:
    """``"<METHOD> <path>"`` for a plain HTTP API route (FULL for these methods, PARTIAL for the
    others); None for anything else (a websocket, a mount, a route class with its own match)."""
    route = ctx.original_route
    if ctx.starlette_route is not None or type(route).matches is not APIRoute.matches:
        return None
    if not path.startswith("^") or not isinstance(ctx.methods, set | frozenset):
        return None
    methods = "|".join(sorted(re.escape(m) for m in ctx.methods)) if ctx.methods else "[^ ]*"
    return f"(?:{methods}) {path[1:]}"


def regexes(included: Any) -> tuple[re.Pattern[str], re.Pattern[str] | None] | None:
    """For ``included`` (an ``_IncludedRouter``): a pattern matching a path iff some route's path
    regex does, and — when every route is a plain HTTP API route — a pattern matching
    ``"<METHOD> <path>"`` iff some route matches both. None when no pre-check is possible."""
    paths: list[str] = []
    with_methods: list[str] | None = []
    for ctx in included.effective_route_contexts():
        path = _path_pattern(ctx)
        if path is None:
            return None
        paths.append(path)
        full = _method_pattern(ctx, path)
        if full is None or with_methods is None:
            with_methods = None
        else:
            with_methods.append(full)
    if not paths:
        return None
    full_rx = re.compile("|".join(f"(?:{p})" for p in with_methods)) if with_methods else None
    return re.compile("|".join(f"(?:{p})" for p in paths)), full_rx


def _prechecked(included: Any, path_rx: re.Pattern[str], full_rx: re.Pattern[str] | None):
    full_walk = included.matches  # the instance's own method, before it is shadowed
    router = included.original_router
    version = router._get_routes_version()

    def matches(scope: Any) -> tuple[Match, Any]:
        if router._routes_version != version:
            return full_walk(scope)
        path = get_route_path(scope)
        if path_rx.match(path) is None:
            return Match.NONE, {}
        if full_rx is None or scope["type"] != "http":
            return full_walk(scope)
        # every route here is an HTTP API route: one whose path matches answers FULL for its
        # methods, PARTIAL for the others (an included router's child scope is always empty)
        return (Match.FULL if full_rx.match(f"{scope['method']} {path}") else Match.PARTIAL), {}

    return matches


def install(app: FastAPI) -> int:
    """Add the pre-check to every top-level included router of ``app`` that allows one (call it
    once every route is added); returns how many got one."""
    done = 0
    for route in app.router.routes:
        if not (hasattr(route, "effective_route_contexts") and hasattr(route, "original_router")):
            continue
        if "matches" in vars(route):
            continue  # pre-checked by an earlier install
        if route.original_router.routes and any(
            hasattr(r, "original_router") for r in route.original_router.routes
        ):
            continue  # nested includes: their versions are not tracked here
        found = regexes(route)
        if found is not None:
            route.matches = _prechecked(route, *found)  # type: ignore[method-assign]
            done += 1
    return done

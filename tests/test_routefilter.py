"""The routers' regex pre-check (routefilter.py) answers exactly what FastAPI's own walk answers.

Every top-level included router of the real app is asked about every route's path (parameters
filled), near misses of each (a trailing slash, one segment more or less, another prefix) and
unknown paths, under every method and both scope types: the pre-checked ``matches`` and the
router's own must agree on each. Then whole requests: the answering route, 405 with Allow, 404.
"""

from __future__ import annotations

import re

import pytest
from fastapi import APIRouter

from chatmem import routefilter
from chatmem.app import create_app

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE")


def _paths(app) -> set[str]:
    out = {"/", "", "/api", "/api/", "/api/nothing", "/rpc", "/v1", "/mcp", "/assets/x.js"}
    for route in app.router.routes:
        contexts = getattr(route, "effective_route_contexts", None)
        formats = [getattr(c, "path_format", None) for c in (contexts() if contexts else [route])]
        for fmt in filter(None, formats):
            path = re.sub(r"\{[^}]+\}", "x_1", fmt)
            head = path.rsplit("/", 1)[0]
            out |= {path, path + "/", path + "/more", head, head + "/other", "/x" + path}
            out.add(path.replace("/api/", "/api/v2/", 1))
    return out


def _scope(kind: str, method: str, path: str, root_path: str = "") -> dict:
    return {
        "type": kind,
        "method": method,
        "path": root_path + path,
        "root_path": root_path,
        "headers": [],
        "query_string": b"",
    }


def test_precheck_installed_on_the_api_routers(settings):
    app = create_app(settings)
    prechecked = [r for r in app.router.routes if "matches" in vars(r)]
    assert len(prechecked) >= 20  # every API router of app.ROUTERS


@pytest.mark.parametrize("root_path", ["", "/chat"])
def test_precheck_agrees_with_the_full_walk(settings, root_path):
    app = create_app(settings)
    routers = [r for r in app.router.routes if "matches" in vars(r)]
    checked = 0
    for path in sorted(_paths(app)):
        for kind in ("http", "websocket"):
            for method in METHODS if kind == "http" else ("GET",):
                for router in routers:
                    fast = router.matches(_scope(kind, method, path, root_path))
                    full = type(router).matches(router, _scope(kind, method, path, root_path))
                    assert fast[0] == full[0], (kind, method, path, router.original_router)
                    assert fast[1] == full[1] == {}
                    checked += 1
    assert checked > 10_000


def test_a_router_changed_after_install_is_walked_in_full(settings):
    app = create_app(settings)
    router = APIRouter()
    router.add_api_route("/api/late-a", lambda: {"a": 1}, methods=["GET"])
    app.include_router(router)
    assert routefilter.install(app) == 1  # the new router only
    included = app.router.routes[-1]
    assert "matches" in vars(included)
    router.add_api_route("/api/late-b", lambda: {"b": 2}, methods=["GET"])  # after install
    scope = _scope("http", "GET", "/api/late-b")
    assert included.matches(scope)[0] == type(included).matches(included, scope)[0]
    assert included.matches(scope)[0].name == "FULL"


async def test_requests_reach_the_same_routes(app, new_user, anon):
    c = (await new_user()).client
    created = await c.post("/api/conversations", json={})
    assert created.status_code == 201
    cid = created.json()["id"]
    body = {"role": "user", "content": "logged", "generate": False}
    assert (await c.post(f"/api/conversations/{cid}/messages", json=body)).status_code == 201
    listed = await c.get(f"/api/conversations/{cid}/messages")
    assert listed.status_code == 200
    wrong = await c.put(f"/api/conversations/{cid}/messages")
    assert wrong.status_code == 405
    assert "POST" in wrong.headers["allow"] and "GET" in wrong.headers["allow"]
    missing = await c.get("/api/no-such-thing")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert (await anon.get("/api/health")).json()["ok"] is True

"""The server side of the web app: the SPA's routes answer index.html (history fallback) with the
strict CSP, hashed assets are cached, /docs is Swagger UI from the package (no CDN), and the
checked-in OpenAPI document the front-end's types come from matches the live app."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest

from chatmem.app import create_app
from chatmem.cli import openapi as web_openapi
from chatmem.web.csp import CSP, POLICY
from chatmem.web.routes import DIST, SPA_PATHS

from .conftest import make_settings

ROOT = Path(__file__).resolve().parents[1]
FRONTEND = ROOT / "frontend"


def require_built_ui() -> None:
    """`make test` builds the UI first; a bare pytest run without it fails loudly (no skip)."""
    if not (DIST / "index.html").is_file():
        raise RuntimeError("the web app is not built: run `make ui` (or `make test`)")


@pytest.fixture
async def web_app(tmp_path, sqlite_template):
    """Static files do not touch the database: one dialect is enough."""
    require_built_ui()
    target = tmp_path / "web.db"
    shutil.copy(sqlite_template, target)
    application = create_app(make_settings(f"sqlite:///{target}"))
    async with application.router.lifespan_context(application):
        yield application


async def _get(app, path: str) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as c:
        return await c.get(path)


def test_openapi_document_is_current():
    """frontend/openapi.json is what the app serves: the typed client is not stale. When this
    fails, run `make web-api` and commit frontend/openapi.json and frontend/src/api/schema.d.ts."""
    checked = json.loads((FRONTEND / "openapi.json").read_text(encoding="utf-8"))
    live = json.loads(web_openapi.dumps(web_openapi.document()))
    assert checked == live, "the API changed: run `make web-api` to regenerate the web client"


def test_spa_routes_agree_with_the_front_end_router():
    src = (FRONTEND / "src/app/routes.tsx").read_text(encoding="utf-8")
    listed = re.search(r"export const ROUTES = \[(.*?)\]", src, re.S)
    assert listed
    front = {re.sub(r":(\w+)", r"{\1}", p) for p in re.findall(r'"([^"]+)"', listed.group(1))}
    server = {
        re.sub(r"\{(\w+)\}", lambda m: "{" + m.group(1).replace("_", "") + "}", p)
        for p in SPA_PATHS
    }
    norm = lambda paths: {re.sub(r"\{\w+\}", "{}", p) for p in paths}  # noqa: E731
    assert norm(front) == norm(server)


async def test_history_fallback_and_csp(web_app):
    index = (DIST / "index.html").read_text()
    for path in ("/", "/c/c_does_not_matter", "/archive", "/settings", "/login", "/projects/p1"):
        r = await _get(web_app, path)
        assert r.status_code == 200, path
        assert r.text == index
        assert r.headers["content-security-policy"] == CSP
        assert r.headers["cache-control"] == "no-cache"
    assert "'unsafe-inline'" not in CSP and "'unsafe-eval'" not in CSP
    assert POLICY["script-src"] == "'self'" and POLICY["frame-ancestors"] == "'none'"
    # the built page has no inline script: every <script> has a same-origin src
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", index, re.S)
    assert scripts and all('src="/assets/' in attrs and not body.strip() for attrs, body in scripts)
    # an unknown API path is still a JSON 404, not the app
    r = await _get(web_app, "/api/nope")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


async def test_assets_are_cached_immutably(web_app):
    name = re.search(r'src="(/assets/[^"]+\.js)"', (DIST / "index.html").read_text()).group(1)
    r = await _get(web_app, name)
    assert r.status_code == 200 and "javascript" in r.headers["content-type"]
    assert "immutable" in r.headers["cache-control"]
    assert (await _get(web_app, "/assets/missing.js")).status_code == 404
    # gzipped for clients that accept it (httpx does): same bytes once decoded, ~3× smaller
    raw = (DIST / name.lstrip("/")).read_bytes()
    assert r.headers["content-encoding"] == "gzip" and r.content == raw
    assert int(r.headers["content-length"]) < len(raw) / 2
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=web_app), base_url="http://test"
    ) as c:
        plain = await c.get(name, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == raw


async def test_docs_are_served_from_the_package(web_app):
    r = await _get(web_app, "/docs")
    assert r.status_code == 200 and r.headers["content-security-policy"] == CSP
    refs = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert refs and all(ref.startswith(("/assets/", "data:")) for ref in refs), refs
    assert "cdn" not in r.text.lower()
    for ref in refs:
        if ref.startswith("/assets/"):
            assert (await _get(web_app, ref)).status_code == 200

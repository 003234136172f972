"""Serves the web app (a single-page app built from ``frontend/`` into ``web/dist``) and the API
docs from the same origin as the API, so the HttpOnly session cookie and the CSRF header work
without CORS.

Every path the app routes to in the browser (``SPA_PATHS``) answers with its ``index.html``
(history fallback), so a conversation URL survives a reload or a new tab. Hashed assets under
``/assets`` are cached forever; HTML is revalidated. ``/docs`` is Swagger UI from the bundled
``swagger-ui-dist`` files — it works offline, and its start-up script is a file, not inline code.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

import anyio
from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.staticfiles import StaticFiles

from .csp import HTML_HEADERS

DIST = Path(__file__).parent / "dist"

#: Browser routes of the app (the front-end's router must agree: tests/test_web_app_server.py).
SPA_PATHS = (
    "/",
    "/login",
    "/c/{conversation_id}",
    "/archive",
    "/projects/{project_id}",
    "/settings",
    "/memories",
    "/workspaces/{workspace_id}",
    "/companions",
    "/companions/{agent_id}",
    "/admin",
    "/admin/{section}",
)

NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>chatmem</title>
<h1>The web app is not built</h1>
<p>This checkout has no <code>src/chatmem/web/dist</code>. Run <code>make ui</code> (needs Node 20
and npm), or use <code>make serve</code>, which builds it. The API is up: its document is <a href="/openapi.json">/openapi.json</a>.</p>
"""

router = APIRouter(include_in_schema=False)


def _page(name: str):
    path = DIST / name
    if not path.is_file():
        return HTMLResponse(NOT_BUILT, status_code=503, headers=HTML_HEADERS)
    return FileResponse(path, media_type="text/html", headers=HTML_HEADERS)


async def index():
    return _page("index.html")


for _path in SPA_PATHS:
    router.add_api_route(_path, index, methods=["GET"], include_in_schema=False)


@router.get("/docs")
async def docs():
    """Swagger UI over /openapi.json, served from the package (no CDN)."""
    return _page("docs.html")


IMMUTABLE = "public, max-age=31536000, immutable"
COMPRESSIBLE = {".js": "text/javascript", ".css": "text/css", ".json": "application/json"}


@functools.lru_cache(maxsize=64)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    """A build file gzipped once per process (the files never change under a hashed name)."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0)


class ImmutableStatic(StaticFiles):
    """Hashed build output: the name changes with the content, so it may be cached for a year.
    Scripts and styles go out gzipped to clients that accept it (the bundle shrinks ~3×)."""

    async def get_response(self, path, scope):
        suffix = Path(path).suffix
        accepts = dict(scope.get("headers") or ()).get(b"accept-encoding", b"")
        if suffix in COMPRESSIBLE and b"gzip" in accepts:
            full, stat = await anyio.to_thread.run_sync(self.lookup_path, path)
            if stat is not None and full:
                body = await anyio.to_thread.run_sync(_gzipped, full, stat.st_mtime_ns)
                return Response(
                    body,
                    media_type=COMPRESSIBLE[suffix],
                    headers={
                        "Content-Encoding": "gzip",
                        "Vary": "Accept-Encoding",
                        "Cache-Control": IMMUTABLE,
                    },
                )
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = IMMUTABLE
        return response


def mount(app) -> None:
    app.mount("/assets", ImmutableStatic(directory=DIST / "assets", check_dir=False), name="assets")

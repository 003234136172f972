"""Serves the web app (a single-page app built from ``frontend/`` into ``web/dist``) and the API
docs from the same origin as the API, so the HttpOnly session cookie and the CSRF header work
without CORS.

Every path the app routes to in the browser (``SPA_PATHS``) answers with its ``index.html``
(history fallback), so a conversation URL survives a reload or a new tab. Hashed assets under
``/assets`` are cached forever; HTML is revalidated. ``/docs`` is Swagger UI from the bundled
``swagger-ui-dist`` files — it works offline, and its start-up script is a file, not inline code.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse
from starlette.staticfiles import StaticFiles

from .csp import HTML_HEADERS

DIST = Path(__file__).parent / "dist"

#: Browser routes of the app (the front-end's router must agree: tests/test_web_routes.py).
SPA_PATHS = (
    "/",
    "/login",
    "/c/{conversation_id}",
    "/archive",
    "/projects/{project_id}",
    "/settings",
)

NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>chatmem</title>
<h1>The web app is not built</h1>
<p>This checkout has no <code>src/chatmem/web/dist</code>. Run <code>make ui</code> (needs Node 20
and npm), or use <code>make serve</code>, which builds it. The API is up: see <a href="/docs">/docs</a>.</p>
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


class ImmutableStatic(StaticFiles):
    """Hashed build output: the name changes with the content, so it may be cached for a year."""

    async def get_response(self, path, scope):
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response


def mount(app) -> None:
    app.mount("/assets", ImmutableStatic(directory=DIST / "assets", check_dir=False), name="assets")

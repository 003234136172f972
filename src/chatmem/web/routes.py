"""Serves the web UI (a dependency-free single page) from the same origin as the API, so the
HttpOnly session cookie and the CSRF header work without CORS."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index():
    return FileResponse(STATIC / "index.html", media_type="text/html")


def mount(app) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

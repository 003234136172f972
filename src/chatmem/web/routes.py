"""Serves the web UI's static page at ``/`` (same origin as the API, so the session cookie works)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

STATIC = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index():
    return FileResponse(STATIC / "index.html", media_type="text/html")

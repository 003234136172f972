"""The app's index.html with a page's own title, for pages a link preview must describe.

A shared conversation's link (``/share/{token}``) is pasted into chats and social sites, whose
crawlers do not run JavaScript: the server puts the share's title into ``<title>`` and the Open
Graph tags of the same ``index.html`` the app boots from. The title is HTML-escaped (it is user
text); the CSP is the app's (no inline script is added).
"""

from __future__ import annotations

import html
from pathlib import Path

from fastapi.responses import HTMLResponse

from .csp import HTML_HEADERS

DIST = Path(__file__).parent / "dist"  # the same build web/routes.py serves
NOT_BUILT = "<!doctype html><title>chatmem</title><p>The web app is not built: run make ui.</p>"
SITE = "chatmem"


def titled_page(title: str | None, *, status_code: int = 200) -> HTMLResponse:
    """index.html titled ``title`` (og:title, og:type, og:site_name); None: the plain page."""
    path = DIST / "index.html"
    if not path.is_file():
        return HTMLResponse(NOT_BUILT, status_code=503, headers=HTML_HEADERS)
    page = path.read_text(encoding="utf-8")
    if title:
        safe = html.escape(title, quote=True)
        meta = (
            f'<meta property="og:title" content="{safe}">'
            f'<meta property="og:type" content="article">'
            f'<meta property="og:site_name" content="{SITE}">'
            f'<meta name="twitter:card" content="summary">'
        )
        start, end = page.find("<title>"), page.find("</title>")
        if start >= 0 and end > start:
            page = page[:start] + f"<title>{safe} · {SITE}</title>" + meta + page[end + 8 :]
        else:
            page = page.replace("</head>", meta + "</head>", 1)
    return HTMLResponse(page, status_code=status_code, headers=HTML_HEADERS)

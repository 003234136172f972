"""The Content-Security-Policy of the web app and the API docs page, in one place.

The built front-end is only same-origin files (Vite emits external module scripts and stylesheets,
no inline code), so the policy can forbid inline script and ``eval`` outright. Styles are
same-origin too (components set styles through the CSSOM, which CSP allows). Images are limited to
this origin plus ``data:``/``blob:``: Markdown from a model cannot make the browser fetch a
tracking pixel from elsewhere. Nothing may frame the app (clickjacking).
"""

from __future__ import annotations

POLICY: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data: blob:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "worker-src": "'self' blob:",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}

CSP = "; ".join(f"{k} {v}" for k, v in POLICY.items())

#: Headers for every HTML page the web module serves (the edge middleware adds nosniff, the
#: referrer policy and the rest; it leaves a CSP that a response already has alone).
HTML_HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-cache"}

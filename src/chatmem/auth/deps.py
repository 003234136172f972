"""FastAPI dependencies: the Runtime, the calling Principal, and CSRF checks for cookie sessions.

Routes declare them through the ``Annotated`` aliases at the bottom — ``rt: RuntimeDep``,
``p: CurrentUser``, ``p: CurrentAdmin`` — so a signature says what a route depends on.

A request is authenticated by ``Authorization: Bearer <api key>`` or by the ``chatmem_session``
cookie. Cookie-authenticated writes must echo the session's CSRF token in ``X-CSRF-Token`` (the
token is given at login and readable from the ``chatmem_csrf`` cookie), so a foreign page cannot
make the browser write on the user's behalf. Bearer requests are not CSRF-exposed.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from ..errors import Forbidden, Unauthorized
from ..runtime import Runtime
from . import service
from .models import Principal

SESSION_COOKIE = "chatmem_session"
CSRF_COOKIE = "chatmem_csrf"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


async def get_runtime(request: Request) -> Runtime:
    # async: FastAPI runs a plain ``def`` dependency on its thread pool — a thread hand-off on
    # every request for an attribute read (~0.1 ms of CPU per request)
    return request.app.state.runtime


async def current_user(request: Request) -> Principal:
    rt: Runtime = request.app.state.runtime
    auth = request.headers.get("authorization", "")
    if auth:
        scheme, _, key = auth.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise Unauthorized("use 'Authorization: Bearer <api key>'")
        return await service.principal_for_key(rt.db, key.strip(), rt.principals)
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise Unauthorized("authentication required")
    p = await service.principal_for_session(rt.db, token, rt.principals)
    if request.method not in SAFE_METHODS:
        check_csrf(request, p)
    return p


def check_csrf(request: Request, p: Principal) -> None:
    sent = request.headers.get("x-csrf-token", "")
    # bytes: compare_digest raises on non-ASCII str, and header values may be any latin-1
    if not sent or not hmac.compare_digest(
        sent.encode("utf-8", "surrogateescape"), p.csrf_token.encode()
    ):
        raise Forbidden("missing or wrong X-CSRF-Token", code="csrf_failed")


async def current_admin(request: Request) -> Principal:
    p = await current_user(request)
    if not p.is_admin:
        raise Forbidden("admin only")
    return p


#: the process Runtime (``app.state.runtime``), built by ``app.create_runtime``
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
#: the authenticated caller (API key or session cookie + CSRF on writes); 401 otherwise
CurrentUser = Annotated[Principal, Depends(current_user)]
#: an authenticated admin; 403 for other users
CurrentAdmin = Annotated[Principal, Depends(current_admin)]

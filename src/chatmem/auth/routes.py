"""Auth routes: password login to a session cookie, logout, the caller's own profile, password and
API keys (a new key's secret is in the create answer only; the store keeps its hash)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import ConfigDict, Field

from ..contracts.base import Input, Name, Output
from ..contracts.errors import AUTHED, errors
from ..edge.headers import client_ip, is_https
from ..errors import NotFound, Unauthorized
from ..runtime import Runtime
from . import service
from .deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    CurrentUser,
    RuntimeDep,
    check_csrf,
)

router = APIRouter(prefix="/api", tags=["auth"], responses=errors(*AUTHED))


class UserSettings(Output):
    model_config = ConfigDict(extra="allow")
    memory_enabled: bool = True
    language: Literal["en", "zh"] | None = None
    theme: Literal["system", "light", "dark"] | None = None


class UserOut(Output):
    id: str
    email: str
    name: str
    role: str = Field(description="user | admin")
    settings: UserSettings
    has_password: bool = Field(description="false until a password is set (login-link users)")
    created_at: int


class SessionOut(Output):
    user: UserOut | None = Field(description="null when the browser has no live session")


class LoginOut(Output):
    user: UserOut
    csrf_token: str = Field(description="send it as X-CSRF-Token on cookie-authenticated writes")


class LoginIn(Input):
    email: str = Field(min_length=3, max_length=320)
    password: str = Field(min_length=1, max_length=1024)


class MePatch(Input):
    name: Name | None = None
    memory_enabled: bool | None = None
    language: Literal["en", "zh"] | None = None  # UI text and default conversation titles
    theme: Literal["system", "light", "dark"] | None = None


class KeyOut(Output):
    id: str
    name: str
    prefix: str = Field(description="the key's first characters, to recognise it")
    created_at: int
    last_used_at: int | None
    revoked_at: int | None = Field(description="set once revoked; a revoked key never works again")


class KeyPage(Output):
    items: list[KeyOut]


class KeyIn(Input):
    name: str = Field(default="", max_length=100)


class KeyCreated(Output):
    key: KeyOut
    secret: str = Field(description="the key itself: shown this once, never again")


class PasswordIn(Input):
    current_password: str = Field(default="", max_length=1024)
    new_password: str = Field(min_length=service.PASSWORD_MIN, max_length=service.PASSWORD_MAX)


def _set_session_cookies(
    request: Request, response: Response, rt: Runtime, token: str, csrf: str
) -> None:
    """Secure when configured, and always when the request came over https (directly, or
    through a trusted proxy's X-Forwarded-Proto)."""
    max_age = rt.settings.session_ttl_s
    secure = rt.settings.cookie_secure or is_https(request)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        csrf,
        max_age=max_age,
        httponly=False,
        samesite="lax",
        secure=secure,
        path="/",
    )


@router.post("/auth/login", response_model=LoginOut, responses=errors(429))
async def login(body: LoginIn, request: Request, response: Response, rt: RuntimeDep):
    """Password login (429 + Retry-After beyond the per-IP and per-account limits)."""
    token, csrf, user = await service.login_guarded(
        rt.db,
        rt.login_guard,
        client_ip(request),
        body.email,
        body.password,
        rt.settings.session_ttl_s,
    )
    _set_session_cookies(request, response, rt, token, csrf)
    return {"user": user, "csrf_token": csrf}


@router.get("/auth/magic", include_in_schema=False)
async def magic(token: str, request: Request, rt: RuntimeDep):
    """The first-start login link: a one-time token becomes a session cookie, then the UI."""
    rt.login_guard.admit_link(client_ip(request))
    session, csrf = await service.redeem_login_token(rt.db, token, rt.settings.session_ttl_s)
    response = RedirectResponse("/", status_code=303)
    _set_session_cookies(request, response, rt, session, csrf)
    return response


@router.post("/auth/logout", status_code=204)
async def logout(request: Request, response: Response, rt: RuntimeDep):
    """End the web session. A live session must send its CSRF token (a foreign page cannot log
    the user out); an expired or unknown cookie is simply cleared."""
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        try:
            p = await service.principal_for_session(rt.db, token)
        except Unauthorized:
            p = None
        if p is not None:
            check_csrf(request, p)
            await service.logout(rt.db, token)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
    response.status_code = 204
    return response


@router.get("/auth/session", response_model=SessionOut)
async def session(request: Request, rt: RuntimeDep):
    """Who the browser's session cookie belongs to, or ``{"user": null}`` — never a 401, so the
    web app can tell a logged-out visitor from an error without a failed request."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return {"user": None}
    try:
        p = await service.principal_for_session(rt.db, token)
    except Unauthorized:
        return {"user": None}
    return {"user": service.user_public(await service.find_user(rt.db, p.id))}


@router.get("/me", response_model=UserOut)
async def me(p: CurrentUser, rt: RuntimeDep):
    row = await service.find_user(rt.db, p.id)
    return service.user_public(row)


@router.patch("/me", response_model=UserOut)
async def patch_me(body: MePatch, p: CurrentUser, rt: RuntimeDep):
    settings = body.model_dump(exclude_none=True, include={"memory_enabled", "language", "theme"})
    return await service.update_profile(rt.db, p, name=body.name, settings=settings)


@router.post("/me/password", status_code=204)
async def change_password(
    body: PasswordIn,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    """Change the caller's password (the current one is required once one is set). Every other
    web session of the user ends; this one stays."""
    token = request.cookies.get(SESSION_COOKIE) if p.via == "session" else None
    await service.change_password(
        rt.db, p, body.current_password, body.new_password, session_token=token
    )
    return Response(status_code=204)


@router.get("/me/keys", response_model=KeyPage)
async def list_keys(p: CurrentUser, rt: RuntimeDep):
    """The caller's API keys, oldest first (revoked ones too, marked)."""
    return {"items": await service.list_keys(rt.db, p.id)}


@router.post("/me/keys", status_code=201, response_model=KeyCreated)
async def create_key(body: KeyIn, p: CurrentUser, rt: RuntimeDep):
    """A new API key for the caller; ``secret`` is in this answer only."""
    kid, secret = await service.create_key(rt.db, p.id, body.name.strip())
    keys = {k["id"]: k for k in await service.list_keys(rt.db, p.id)}
    return {"key": keys[kid], "secret": secret}


@router.delete("/me/keys/{kid}", status_code=204, responses=errors(404))
async def revoke_key(kid: str, p: CurrentUser, rt: RuntimeDep):
    """Revoke one of the caller's live keys (another user's key, or a revoked one: 404)."""
    if not kid.startswith("key_") or not await service.revoke_key(rt.db, kid, p.id):
        raise NotFound("no such live API key")
    return Response(status_code=204)

"""Admin console routes (``/api/admin/users``, ``/usage``, ``/ratings``): every one
depends on ``CurrentAdmin`` — a non-admin gets 403 and nothing is read or changed."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from ..auth.deps import CurrentAdmin, RuntimeDep
from ..contracts.errors import AUTHED, errors
from . import service
from .wire import (
    AdminPasswordIn,
    AdminUsageOut,
    AdminUserIn,
    AdminUserOut,
    AdminUserPage,
    AdminUserPatch,
    LoginLinkOut,
    RatingSummary,
)

router = APIRouter(prefix="/api/admin", tags=["admin"], responses=errors(*AUTHED, 403))

Days = Annotated[int, Query(ge=1, le=366)]


@router.get("/users", response_model=AdminUserPage)
async def list_users(_a: CurrentAdmin, rt: RuntimeDep):
    return await service.list_users(rt.db)


@router.post("/users", status_code=201, response_model=AdminUserOut, responses=errors(409))
async def create_user(body: AdminUserIn, _a: CurrentAdmin, rt: RuntimeDep):
    """A new user, with a password or without one (then send them a login link)."""
    return await service.create_user(rt.db, body)


@router.patch("/users/{uid}", response_model=AdminUserOut, responses=errors(404, 409))
async def patch_user(uid: str, body: AdminUserPatch, admin: CurrentAdmin, rt: RuntimeDep):
    """Make admin / user, disable / enable (disabling ends their web sessions)."""
    return await service.patch_user(rt.db, admin, uid, body)


@router.post("/users/{uid}/password", status_code=204, responses=errors(404))
async def set_password(uid: str, body: AdminPasswordIn, _a: CurrentAdmin, rt: RuntimeDep):
    """Reset a user's password; their web sessions end."""
    await service.set_password(rt.db, uid, body.password)
    return Response(status_code=204)


@router.post("/users/{uid}/login-link", response_model=LoginLinkOut, responses=errors(404))
async def login_link(uid: str, request: Request, _a: CurrentAdmin, rt: RuntimeDep):
    """A one-time login link for the user (valid 24 hours), on ``CHATMEM_PUBLIC_URL`` when set
    (behind a proxy the request's own address is the internal one)."""
    return await service.login_link(rt.db, uid, rt.settings.public_url or str(request.base_url))


@router.get("/usage", response_model=AdminUsageOut)
async def usage(_a: CurrentAdmin, rt: RuntimeDep, days: Days = 30):
    """Answers, tokens and cost per UTC day, user and model over the last ``days`` days."""
    return await service.usage(rt.db, days)


@router.get("/ratings", response_model=RatingSummary)
async def ratings(_a: CurrentAdmin, rt: RuntimeDep, days: Days = 30):
    """Likes, dislikes and dislike reasons per model, and the newest rated comments."""
    return await service.ratings(rt.db, days)

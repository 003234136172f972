"""Share routes: owner endpoints under /api/conversations/{id}/share and the public reader.

``GET /api/public/shared/{token}`` needs no authentication and is limited to 60 reads per minute
per client IP (the peer address: a forwarded-for header is client-controlled, so it is not
trusted here; deployments behind a proxy should let the proxy pass the real peer).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..contracts.errors import AUTHED, errors
from ..conversations.wire import ConversationOut
from ..errors import TooManyRequests
from ..runtime import Runtime
from . import service
from .ratelimit import SlidingWindow

router = APIRouter(tags=["sharing"], responses=errors(*AUTHED))

PUBLIC_LIMIT_PER_MIN = 60
LIMITER_KEY = "sharing.public_limiter"


def install(rt: Runtime) -> None:
    rt.extras[LIMITER_KEY] = SlidingWindow(PUBLIC_LIMIT_PER_MIN, 60_000)


def public_rate_limit(request: Request) -> None:
    limiter: SlidingWindow = request.app.state.runtime.extras[LIMITER_KEY]
    ip = request.client.host if request.client else "unknown"
    wait_ms = limiter.hit(ip)
    if wait_ms:
        raise TooManyRequests(
            f"at most {PUBLIC_LIMIT_PER_MIN} shared-conversation reads per minute; slow down",
            code="rate_limited",
            details={"retry_after_ms": wait_ms},
        )


@router.post(
    "/api/conversations/{cid}/share",
    status_code=201,
    response_model=service.ShareOut,
    responses=errors(404),
)
async def create_share(
    cid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await service.share(rt.db, p, cid)


@router.get(
    "/api/conversations/{cid}/share", response_model=service.ShareOut, responses=errors(404)
)
async def get_share(
    cid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await service.get_share(rt.db, p, cid)


@router.delete("/api/conversations/{cid}/share", status_code=204, responses=errors(404))
async def revoke_share(
    cid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    await service.revoke(rt.db, p, cid)
    return Response(status_code=204)


@router.get(
    "/api/public/shared/{token}",
    dependencies=[Depends(public_rate_limit)],
    response_model=service.PublicShare,
    responses=errors(404, 429),
)
async def read_shared(token: str, rt: Runtime = Depends(get_runtime)):
    return await service.read_public(rt.db, token)


@router.post(
    "/api/public/shared/{token}/clone",
    status_code=201,
    response_model=ConversationOut,
    responses=errors(404),
)
async def clone_shared(
    token: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await service.clone(rt.db, p, token)

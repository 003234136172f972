"""Share routes: owner endpoints under /api/conversations/{id}/share and the public reader.

``GET /share/{token}`` is the readable page (the web app, titled with the share's title for link
previews; 404 once revoked). ``GET /api/public/shared/{token}`` needs no authentication and is limited per client IP
(``public_share_rate_per_ip``, 60 a minute; the peer address, or the one a trusted proxy
forwarded — edge/headers.py), answering 429 with ``Retry-After`` beyond it.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from ..conversations.wire import ConversationOut
from ..edge.headers import client_ip
from ..errors import NotFound, TooManyRequests
from ..web.pages import titled_page
from . import service

router = APIRouter(tags=["sharing"], responses=errors(*AUTHED))


def public_rate_limit(request: Request, rt: RuntimeDep) -> None:
    wait = rt.share_limiter.hit(client_ip(request))
    if wait:
        raise TooManyRequests(
            "too many shared-conversation reads; slow down",
            code="rate_limited",
            retry_after_s=wait,
        )


@router.post(
    "/api/conversations/{cid}/share",
    status_code=201,
    response_model=service.ShareOut,
    responses=errors(404),
)
async def create_share(cid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.share(rt.db, p, cid)


@router.get(
    "/api/conversations/{cid}/share", response_model=service.ShareOut, responses=errors(404)
)
async def get_share(cid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.get_share(rt.db, p, cid)


@router.delete("/api/conversations/{cid}/share", status_code=204, responses=errors(404))
async def revoke_share(cid: str, p: CurrentUser, rt: RuntimeDep):
    await service.revoke(rt.db, p, cid)
    return Response(status_code=204)


@router.get(
    "/api/public/shared/{token}",
    dependencies=[Depends(public_rate_limit)],
    response_model=service.PublicShare,
    responses=errors(404, 429),
)
async def read_shared(token: str, rt: RuntimeDep):
    return await service.read_public(rt.db, token)


@router.post(
    "/api/public/shared/{token}/clone",
    status_code=201,
    response_model=ConversationOut,
    responses=errors(404),
)
async def clone_shared(token: str, p: CurrentUser, rt: RuntimeDep):
    return await service.clone(rt.db, p, token)


@router.get("/share/{token}", include_in_schema=False, dependencies=[Depends(public_rate_limit)])
async def share_page(token: str, rt: RuntimeDep):
    """The public page: the app's index.html with the share's Open Graph title (the app renders
    the messages from the public API); a revoked or unknown token answers 404."""
    try:
        shared = await service.read_public(rt.db, token)
    except NotFound:
        return titled_page(None, status_code=404)
    return titled_page(shared["title"])

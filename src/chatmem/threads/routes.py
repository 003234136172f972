"""HTTP routes for inline threads: create one on a quoted span, list a conversation's threads."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..runtime import Runtime
from . import service
from .service import InlineThreadIn

router = APIRouter(prefix="/api/conversations", tags=["inline-threads"])


@router.post("/{cid}/inline-threads", status_code=201)
async def create(
    cid: str,
    body: InlineThreadIn,
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await service.create_thread(rt.db, p, cid, body)


@router.get("/{cid}/inline-threads")
async def list_(
    cid: str,
    message_id: str | None = Query(None, max_length=64),
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await service.list_threads(rt.db, p, cid, message_id=message_id)

"""HTTP routes for context: the next turn's context report, and manual compaction."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ..auth.deps import current_user, get_runtime
from ..auth.models import Principal
from ..contracts.errors import AUTHED, errors
from ..runtime import Runtime
from . import manage
from .wire import CompactOut, ContextOut

router = APIRouter(prefix="/api/conversations", tags=["context"], responses=errors(*AUTHED))


@router.get("/{cid}/context", response_model=ContextOut, responses=errors(404))
async def context(
    cid: str,
    message_id: str | None = Query(None, max_length=64),
    include_messages: bool = False,
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    """The context report of the next turn (a preview), or the one stored with ``message_id``."""
    if message_id:
        return await manage.stored_report(rt, p, cid, message_id)
    return await manage.preview(rt, p, cid, include_messages=include_messages)


@router.post("/{cid}/compact", response_model=CompactOut, responses=errors(404, 409))
async def compact(
    cid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    """Summarise everything before the latest round now (409 while a turn streams)."""
    return await manage.compact_now(rt, p, cid)

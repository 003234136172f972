"""HTTP routes for context: the next turn's context report, and manual compaction."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from . import manage
from .wire import CompactOut, ContextOut

router = APIRouter(prefix="/api/conversations", tags=["context"], responses=errors(*AUTHED))


@router.get("/{cid}/context", response_model=ContextOut, responses=errors(404))
async def context(
    cid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    message_id: Annotated[str | None, Query(max_length=64)] = None,
    include_messages: bool = False,
):
    """The context report of the next turn (a preview), or the one stored with ``message_id``."""
    if message_id:
        return await manage.stored_report(rt, p, cid, message_id)
    return await manage.preview(rt, p, cid, include_messages=include_messages)


@router.post("/{cid}/compact", response_model=CompactOut, responses=errors(404, 409))
async def compact(cid: str, p: CurrentUser, rt: RuntimeDep):
    """Summarise everything before the latest round now (409 while a turn streams)."""
    return await manage.compact_now(rt, p, cid)

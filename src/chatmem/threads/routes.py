"""HTTP routes for inline threads: create one on a quoted span, list a conversation's threads."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from ..conversations.wire import ConversationOut, ConversationPage
from . import service
from .service import InlineThreadIn

router = APIRouter(prefix="/api/conversations", tags=["inline-threads"], responses=errors(*AUTHED))


@router.post(
    "/{cid}/inline-threads",
    status_code=201,
    response_model=ConversationOut,
    responses=errors(404),
)
async def create(
    cid: str,
    body: InlineThreadIn,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return await service.create_thread(rt.db, p, cid, body)


@router.get("/{cid}/inline-threads", response_model=ConversationPage, responses=errors(404))
async def list_(
    cid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    message_id: Annotated[str | None, Query(max_length=64)] = None,
):
    return await service.list_threads(rt.db, p, cid, message_id=message_id)

"""Native HTTP routes for conversations and messages: auth, one service call, a contract.

``POST /api/conversations/{cid}/messages`` (which starts a turn) lives in ``generation/routes.py``."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts import fastroute
from ..contracts.errors import AUTHED, errors
from . import service
from .wire import (
    ConversationIn,
    ConversationOut,
    ConversationPage,
    ConversationPatch,
    ForkIn,
    LeafIn,
    MessageOut,
    MessagePage,
    MessagePatch,
    RoundDeleted,
)

router = APIRouter(prefix="/api/conversations", tags=["conversations"], responses=errors(*AUTHED))


@fastroute.post(router, "", status_code=201, response_model=ConversationOut, responses=errors(404))
async def create(body: ConversationIn, request: Request, p: CurrentUser, rt: RuntimeDep):
    """Without a title the conversation is named in the user's language until its first turn
    names it (``settings.language``, else the request's Accept-Language, else English)."""
    if body.model:  # the model its turns run on: an unknown one is a 422, as a turn's would be
        rt.providers.resolve(body.model)
    return await service.create_conversation(
        rt.db, p, body, accept_language=request.headers.get("accept-language")
    )


@router.get("", response_model=ConversationPage, responses=errors(404))
async def list_(
    p: CurrentUser,
    rt: RuntimeDep,
    archived: bool = False,
    starred: bool | None = None,
    project_id: str | None = None,
    agent_id: str | None = None,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 30,
    workspace_id: Annotated[
        str, Query(max_length=64, description="a workspace's conversations (default: personal)")
    ] = "",
):
    return await service.list_conversations(
        rt.db,
        p,
        archived=archived,
        starred=starred,
        project_id=project_id,
        agent_id=agent_id,
        cursor=cursor,
        limit=limit,
        workspace_id=workspace_id,
    )


@router.get("/{cid}", response_model=ConversationOut, responses=errors(404))
async def get(cid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.get_conversation(rt.db, p, cid)


@router.patch("/{cid}", response_model=ConversationOut, responses=errors(403, 404))
async def patch(
    cid: str,
    body: ConversationPatch,
    p: CurrentUser,
    rt: RuntimeDep,
):
    if body.model:
        rt.providers.resolve(body.model)
    return await service.patch_conversation(rt.db, p, cid, body)


@router.delete("/{cid}", status_code=204, responses=errors(403, 404))
async def delete(cid: str, p: CurrentUser, rt: RuntimeDep):
    await service.delete_conversation(rt.db, p, cid)
    return Response(status_code=204)


@router.get(
    "/{cid}/messages",
    response_model=MessagePage,
    responses={
        **errors(404),
        200: {
            "headers": {
                "X-Has-More": {
                    "description": "true when older messages exist",
                    "schema": {"type": "string"},
                },
                "X-Next-Before": {
                    "description": "the cursor for the next page",
                    "schema": {"type": "string"},
                },
            }
        },
    },
)
async def messages(
    cid: str,
    response: Response,
    p: CurrentUser,
    rt: RuntimeDep,
    before: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 30,
    mode: Literal["path", "tree"] = "path",
):
    if mode == "tree":
        return await service.read_tree(rt.db, p, cid)
    page = await service.read_path(rt.db, p, cid, before=before, limit=limit)
    response.headers["X-Has-More"] = "true" if page["next_cursor"] else "false"
    if page["next_cursor"]:
        response.headers["X-Next-Before"] = page["next_cursor"]
    return page


@router.get("/{cid}/messages/{mid}", response_model=MessageOut, responses=errors(404))
async def get_message(cid: str, mid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.get_message(rt.db, p, cid, mid)


@router.patch("/{cid}/messages/{mid}", response_model=MessageOut, responses=errors(404, 409, 413))
async def edit_message(
    cid: str,
    mid: str,
    body: MessagePatch,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return await service.edit_message(
        rt.db, p, cid, mid, body.content, rt.settings.max_message_bytes
    )


@router.delete("/{cid}/messages/{mid}", response_model=RoundDeleted, responses=errors(404, 409))
async def delete_round(cid: str, mid: str, p: CurrentUser, rt: RuntimeDep):
    return await service.delete_round(rt.db, p, cid, mid)


@router.patch("/{cid}/active-leaf", response_model=ConversationOut, responses=errors(404))
async def active_leaf(cid: str, body: LeafIn, p: CurrentUser, rt: RuntimeDep):
    return await service.switch_leaf(rt.db, p, cid, body.leaf_id)


@router.post(
    "/{cid}/fork", status_code=201, response_model=ConversationOut, responses=errors(404, 409)
)
async def fork(
    cid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    body: ForkIn | None = None,
):
    return await service.fork(rt.db, p, cid, body or ForkIn())

"""The ``/rpc`` routes of seed 000 (docs/specs.md): auth, one service call, the envelope.

Every response — success, validation error, authentication error, unknown path — is a seed-000
envelope (see envelope.py). The chat turn answers with the reply as a plain-text stream.
(No ``from __future__ import annotations``: FastAPI must see the real body types.)
"""

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute

from ..auth.deps import CurrentUser, RuntimeDep
from ..edge.streaming import DisconnectAwareStream
from . import chat, envelope, memories, service
from .contracts import (
    AgentConversationMessagesPage,
    AgentConversationResponse,
    AgentMemory,
    AgentMemoryList,
    Failure,
    InboxChatRequest,
    MessageFeedbackRequest,
    MessageFeedbackResponse,
    Success,
    SuccessResult,
    UpdateAgentMemoryRequest,
)

router = APIRouter(prefix="/rpc", tags=["seed-000"], route_class=envelope.EnvelopeRoute)


STREAM_HEADERS = {"cache-control": "no-cache, no-transform", "x-accel-buffering": "no"}
FAILURES: dict[int | str, dict[str, Any]] = {
    status: {"model": Failure} for status in (400, 401, 404, 405, 409, 413, 422, 429, 500)
}


def documented(model=None) -> dict:
    """OpenAPI: the success envelope around ``model`` and the failure envelope for every status."""
    responses: dict = dict(FAILURES)
    if model is not None:
        responses[200] = {"model": Success[model]}
    return {"responses": responses}


def text_stream(description: str) -> dict:
    """OpenAPI: a 200 answered as a plain UTF-8 text stream (the AI SDK's text protocol)."""
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


def text_reply(turn: chat.ChatTurn, request: Request) -> DisconnectAwareStream:
    return DisconnectAwareStream(
        chat.reply_text(turn),
        media_type="text/plain; charset=utf-8",
        headers={**STREAM_HEADERS, **turn.headers, "x-request-id": envelope.request_id(request)},
    )


@router.post(
    "/chat/inbox",
    responses={**FAILURES, 200: text_stream("the reply as it is generated, plain UTF-8 text")},
)
async def inbox_chat(
    body: InboxChatRequest,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return text_reply(await chat.start(rt, p, body), request)


@router.get(
    "/chat/inbox/{chatId}/stream",
    responses={
        **FAILURES,
        200: text_stream("the running reply from its first character, plain UTF-8 text"),
        204: {"description": "no reply is being generated in this chat"},
    },
)
async def inbox_resume(
    chatId: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    """The AI SDK resume convention (``useChat({resume: true})``): the chat's running reply, or
    204. ``chatId`` is the agent id (its default conversation) or an agent conversation id."""
    turn = await chat.resume(rt, p, chatId)
    if turn is None:
        return Response(status_code=204, headers={"x-request-id": envelope.request_id(request)})
    return text_reply(turn, request)


@router.get("/chat/inbox/{agentId}/conversation", **documented(AgentConversationResponse))
async def inbox_conversation(
    agentId: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return envelope.ok(request, await service.conversation(rt.db, p, agentId))


@router.get("/chat/inbox/{agentId}/messages", **documented(AgentConversationMessagesPage))
async def inbox_messages(
    agentId: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
    cursor: str | None = None,
):
    return envelope.ok(request, await service.messages(rt.db, p, agentId, cursor))


@router.post(
    "/chat/inbox/{agentId}/messages/{messageId}/feedback", **documented(MessageFeedbackResponse)
)
async def inbox_feedback(
    agentId: str,
    messageId: str,
    body: MessageFeedbackRequest,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return envelope.ok(request, await service.give_feedback(rt.db, p, agentId, messageId, body))


@router.get("/agent/my/{agentId}/memories", **documented(AgentMemoryList))
async def agent_memories(
    agentId: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return envelope.ok(request, await memories.list_memories(rt.db, p, agentId))


@router.patch("/agent/my/{agentId}/memories/{memoryId}", **documented(AgentMemory))
async def agent_memory_update(
    agentId: str,
    memoryId: str,
    body: UpdateAgentMemoryRequest,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return envelope.ok(request, await memories.update_memory(rt.db, p, agentId, memoryId, body))


@router.delete("/agent/my/{agentId}/memories/{memoryId}", **documented(SuccessResult))
async def agent_memory_delete(
    agentId: str,
    memoryId: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    return envelope.ok(request, await memories.delete_memory(rt.db, p, agentId, memoryId))


ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def _allowed(request: Request) -> set[str]:
    """The methods of the real /rpc routes matching this path (empty: no such path)."""
    path = request.url.path
    return {
        m
        for r in router.routes
        if isinstance(r, APIRoute) and r.endpoint is not rpc_not_found and r.path_regex.match(path)
        for m in r.methods or ()
    }


async def rpc_not_found(request: Request):
    """Unknown ``/rpc`` paths and methods answer in the envelope, not the native error shape;
    a 405 names the allowed methods (``Allow``, RFC 9110)."""
    allowed = _allowed(request)
    if allowed:
        return envelope.fail(
            request,
            405,
            "method_not_allowed",
            "Method not allowed",
            headers={"Allow": ", ".join(sorted(allowed))},
        )
    return envelope.fail(request, 404, "not_found", "Not found")


# Registered last so every real /rpc route matches first.
router.add_api_route("/{rest:path}", rpc_not_found, methods=ALL_METHODS, include_in_schema=False)
router.add_api_route("", rpc_not_found, methods=ALL_METHODS, include_in_schema=False)

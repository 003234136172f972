"""Native HTTP routes for generation: posting a message (which starts a turn), resume, regenerate,
stop, and the model list. Auth, one service call, then JSON or an SSE stream.

A turn, by imports: ``post_message`` → ``service.start_turn`` (lease, rows, first event) →
``turns.TurnRunner`` (``context.service.build_turn_context`` → ``rt.providers`` → the provider's
``stream``) → ``events`` (the durable log) → ``sse_body`` here, following the log.

Content negotiation: a turn-starting POST answers with the SSE stream when the client accepts
``text/event-stream``, else 202 with both message ids (then read or resume the stream).
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts import fastroute
from ..contracts.base import Input
from ..contracts.errors import AUTHED, errors
from ..conversations import service as conversations
from ..conversations.service import check_size
from ..conversations.wire import MessageIn, MessageOut
from ..edge.streaming import DisconnectAwareStream, LastChunk
from ..errors import BadRequest
from ..runtime import Runtime
from . import service
from .contracts import SSE_RESPONSE, ModelList, Stopped, TurnStarted
from .sse import PING, ends_stream, frames

router = APIRouter(tags=["generation"], responses=errors(*AUTHED))
#: ``POST /api/conversations/{cid}/messages``: documented with the conversation routes
messages_router = APIRouter(tags=["conversations"], responses=errors(*AUTHED))

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}


class RegenerateIn(Input):
    message_id: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, max_length=200)


class StopIn(Input):
    message_id: str | None = Field(default=None, max_length=64)


async def sse_body(rt: Runtime, message_id: str, after: int):
    """SSE text for a message's events after ``after``, with ``: ping`` while nothing happens;
    the batch with the terminal event ends the response in the same write (``LastChunk``)."""
    async for batch in service.follow_batches(
        rt, message_id, after, idle_s=rt.settings.ping_interval_s
    ):
        if not batch:
            yield PING
        elif ends_stream(batch):
            yield LastChunk(frames(batch))
        else:
            yield frames(batch)


def wants_sse(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def turn_response(rt: Runtime, request: Request, ids: service.TurnIds):
    if wants_sse(request):
        return DisconnectAwareStream(
            sse_body(rt, ids.assistant_message_id, 0),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )
    body = ids.as_dict()
    body["stream_url"] = (
        f"/api/conversations/{ids.conversation_id}/messages/{ids.assistant_message_id}/stream"
    )
    return JSONResponse(body, status_code=202)


@fastroute.post(
    messages_router,
    "/api/conversations/{cid}/messages",
    status_code=201,
    response_model=MessageOut,
    responses={
        **errors(404, 409, 413, 429),
        200: SSE_RESPONSE,
        201: {
            "description": "log mode (`generate: false` or `role: assistant`): the stored message"
        },
        202: {"model": TurnStarted, "description": "a turn started; read or resume its stream"},
    },
)
async def post_message(cid: str, body: MessageIn, request: Request, p: CurrentUser, rt: RuntimeDep):
    # a log-mode message is stored as is (201); any other starts a turn (SSE, or 202 + ids)
    if body.log_mode:
        return await conversations.append_message(
            rt.db,
            p,
            cid,
            body,
            rt.settings.max_message_bytes,
            max_clock_skew_ms=rt.settings.max_clock_skew_ms,
            followup_delay_ms=rt.settings.log_followup_delay_ms,
        )
    check_size(body.content, rt.settings.max_message_bytes)
    ids = await service.start_turn(
        rt,
        p,
        cid,
        body.content,
        parent_id=body.parent_id,
        model=body.model,
        metadata=body.metadata,
        branch=body.branch,
    )
    return turn_response(rt, request, ids)


#: Event ids are 1.. per message and stored as BIGINT: ASCII digits, at most 2^63 - 1.
MAX_EVENT_ID = 2**63 - 1
_EVENT_ID = re.compile(r"[0-9]{1,19}")


def _last_event_id(request: Request, query_value: str | None) -> int:
    """The client's last seen event: a 64-bit sequence number, else 400 before any stream
    starts (``int()`` would also take ``+5``, ``1_0`` or non-ASCII digits)."""
    raw = request.headers.get("last-event-id") or query_value or "0"
    text = raw.strip()
    if not _EVENT_ID.fullmatch(text) or int(text) > MAX_EVENT_ID:
        raise BadRequest(
            "Last-Event-ID must be an event sequence number (0 to 2^63-1)",
            code="invalid_last_event_id",
            details={"value": raw[:40]},
        )
    return int(text)


@router.get(
    "/api/conversations/{cid}/messages/{mid}/stream",
    responses={
        **errors(404),
        200: SSE_RESPONSE,
        204: {"description": "the message is finished and every event was delivered"},
    },
)
async def resume(
    cid: str,
    mid: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
    last_event_id: Annotated[
        str | None, Query(pattern=r"^[0-9]{1,19}$", description="0 to 2^63-1")
    ] = None,
):
    """Replay the events after Last-Event-ID, then follow live; 204 when there is nothing left."""
    after = _last_event_id(request, last_event_id)
    await service.check_message(rt, p, cid, mid)
    if await service.fully_delivered(rt, mid, after):
        return Response(status_code=204)
    return DisconnectAwareStream(
        sse_body(rt, mid, after), media_type="text/event-stream", headers=SSE_HEADERS
    )


@router.post(
    "/api/conversations/{cid}/regenerate",
    status_code=202,
    response_model=TurnStarted,
    responses={**errors(404, 409, 429), 200: SSE_RESPONSE},
)
async def regenerate(
    cid: str,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
    body: RegenerateIn | None = None,
):
    body = body or RegenerateIn()
    ids = await service.regenerate(rt, p, cid, message_id=body.message_id, model=body.model)
    return turn_response(rt, request, ids)


@router.post("/api/conversations/{cid}/stop", response_model=Stopped, responses=errors(404))
async def stop(
    cid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    body: StopIn | None = None,
):
    return await service.stop(rt, p, cid, (body or StopIn()).message_id)


@router.get("/api/models", tags=["models"], response_model=ModelList)
async def models(p: CurrentUser, rt: RuntimeDep):
    return rt.providers.public_models(is_admin=p.is_admin)

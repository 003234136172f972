"""``/v1/chat/completions`` and ``/v1/models`` (OpenAI-compatible; the bearer token is a chatmem
API key). Auth, one service call, then the answer as a ``chat.completion`` or as the chunk stream
(``data: {...}`` frames ending with ``data: [DONE]``; the usage chunk when
``stream_options.include_usage``). Closing the stream does not stop the turn: it finishes and is
stored like any other (``X-Chatmem-Conversation`` / ``X-Chatmem-Message`` name it).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..auth.deps import CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from ..contracts.openapi import schema_ref
from ..edge.streaming import DisconnectAwareStream, LastChunk
from ..generation import service as generation
from ..generation.sse import TERMINAL
from . import service, transcript
from .wire import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ModelCards,
    StreamError,
)

router = APIRouter(prefix="/v1", tags=["openai-compatible"], responses=errors(*AUTHED))

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
CHUNK_SCHEMA = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "data": {
            "type": "string",
            "description": "a chat.completion.chunk as JSON, an {error} object, or the last "
            "frame `[DONE]` (not JSON)",
            "contentMediaType": "application/json",
            "contentSchema": {"oneOf": [schema_ref(ChatCompletionChunk), schema_ref(StreamError)]},
        }
    },
}


class _Answer:
    """Accumulates a turn's events into the pieces an OpenAI answer is made of."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: list[dict] = []
        self.usage: dict | None = None
        self.stop_reason: str | None = None
        self.error: dict | None = None

    def add(self, e: dict) -> dict | None:
        """Take one event; the delta it contributes to a chunk, if any."""
        kind, data = e["type"], e["data"] or {}
        if kind == "text_delta" and data.get("text"):
            self.text.append(data["text"])
            return {"content": data["text"]}
        if kind == "thinking_delta" and data.get("text"):
            self.reasoning.append(data["text"])
            return {"reasoning_content": data["text"]}
        if kind == "tool_call":
            call = {
                "id": data.get("id") or "",
                "type": "function",
                "function": {"name": data.get("name") or "", "arguments": data.get("arguments")},
            }
            self.tool_calls.append(call)
            return {"tool_calls": [{"index": len(self.tool_calls) - 1, **call}]}
        if kind == "usage":
            self.usage = transcript.usage_of(data)
        elif kind == "done":
            self.stop_reason = data.get("stop_reason")
        elif kind == "error":
            self.error = {
                "code": data.get("code") or "error",
                "message": data.get("message") or "the model failed",
                "type": "server_error",
            }
        return None

    @property
    def finish_reason(self) -> str:
        return transcript.finish_reason(self.stop_reason, bool(self.tool_calls))


def _headers(turn: service.V1Turn) -> dict[str, str]:
    return {
        "X-Chatmem-Conversation": turn.conversation_id,
        "X-Chatmem-Message": turn.assistant_message_id,
    }


def _data(obj) -> str:
    return f"data: {json.dumps(obj, ensure_ascii=False, separators=(',', ':'))}\n\n"


async def _chunks(rt, turn: service.V1Turn, include_usage: bool) -> AsyncIterator[str]:
    base = {
        "id": f"chatcmpl-{turn.assistant_message_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": turn.model,
        "system_fingerprint": None,
    }

    def chunk(delta: dict, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _data({**base, "choices": [choice]})

    answer = _Answer()
    yield chunk({"role": "assistant", "content": ""})
    # one write per batch of events (each a chunk of its own), not one per token; the terminal
    # batch's chunks go out with the closing ones, ending the response (the log ends with it)
    out: list[str] = []
    ended = False
    async for batch in generation.follow_batches(
        rt, turn.assistant_message_id, 0, idle_s=rt.settings.ping_interval_s
    ):
        if not batch:
            yield ": ping\n\n"
        for e in batch:
            delta = answer.add(e)
            if delta:
                out.append(chunk(delta))
            if e["type"] in TERMINAL:
                ended = True
                break
        if out and not ended:
            yield "".join(out)
            out = []
    if answer.error:
        out.append(_data({"error": answer.error}))
    else:
        out.append(chunk({}, answer.finish_reason))
        if include_usage:
            usage = answer.usage or transcript.usage_of({})
            out.append(_data({**base, "choices": [], "usage": usage}))
    out.append("data: [DONE]\n\n")
    yield LastChunk("".join(out))


async def _complete(rt, turn: service.V1Turn) -> JSONResponse:
    answer = _Answer()
    async for e in generation.follow(rt, turn.assistant_message_id):
        answer.add(e)
    if answer.error:
        return JSONResponse({"error": {**answer.error, "details": None}}, 502, _headers(turn))
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(answer.text) if answer.text or not answer.tool_calls else None,
    }
    if answer.tool_calls:
        message["tool_calls"] = answer.tool_calls
    if answer.reasoning:
        message["reasoning_content"] = "".join(answer.reasoning)
    body = {
        "id": f"chatcmpl-{turn.assistant_message_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": turn.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": answer.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": answer.usage or transcript.usage_of({}),
        "system_fingerprint": None,
    }
    return JSONResponse(ChatCompletion.model_validate(body).model_dump(), headers=_headers(turn))


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        **errors(404, 409, 413, 429, 502),
        200: {
            "description": "a chat.completion, or with `stream: true` its chunks as SSE",
            "content": {"text/event-stream": {"schema": CHUNK_SCHEMA}},
        },
    },
)
async def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    p: CurrentUser,
    rt: RuntimeDep,
):
    """A chatmem turn in OpenAI's Chat Completions shape (see the package docstring)."""
    turn = await service.start(rt, p, body, request.headers.get(service.CONVERSATION_HEADER))
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return DisconnectAwareStream(
            _chunks(rt, turn, include_usage),
            media_type="text/event-stream",
            headers={**STREAM_HEADERS, **_headers(turn)},
        )
    return await _complete(rt, turn)


@router.get("/models", response_model=ModelCards)
async def models(_p: CurrentUser, rt: RuntimeDep):
    return service.models(rt)

"""Wire contracts of generation: the 202 answer of a turn start, stop, the model list, and the
SSE events of a message stream (documented in OpenAPI; the stream itself is written by sse.py).

Why it exists: routes declare these as response models so ``/openapi.json`` types every answer,
including the ``text/event-stream`` bodies whose event types a typed client switches on.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..contracts.base import Output, when_present
from ..contracts.openapi import schema_ref
from ..conversations.wire import MessageOut


class TurnStarted(Output):
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    stream_url: str = Field(description="GET it (SSE) to follow the answer; resumable")


class Stopped(Output):
    stopped: list[str] = Field(description="ids of the messages asked to stop")
    messages: list[MessageOut]


class Prices(Output):
    input: float
    output: float
    cache_read: float
    cache_write: float
    per: str


class ModelOut(Output):
    id: str
    label: str
    provider: str
    fast: bool
    context_window: int
    max_output: int
    credits_multiplier: float
    default: bool
    prices: Prices | None = when_present("admins only")


class ModelList(Output):
    items: list[ModelOut]
    next_cursor: str | None = None
    default: str


# ── SSE events: ``id: <seq>`` / ``event: <type>`` / ``data: <one of these>`` ───────────────────


class MessageStart(Output):
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    model: str
    model_label: str


class TextDelta(Output):
    text: str


class ToolCallEvent(Output):
    """A function call the model asked for (OpenAI-compatible providers given ``tools``)."""

    id: str
    name: str
    arguments: str = Field(description="the call's arguments as JSON text")


class UsageEvent(Output):
    input_tokens: int
    context_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    credits: float


class CompactionEvent(Output):
    mode: str
    status: str
    reason: str | None = None
    blocks_added: int = 0
    merged_blocks: int = 0
    summarized_messages: int = 0


class ErrorEvent(Output):
    code: str
    message: str
    recovered: bool | None = Field(
        default=None, description="written by the sweeper after the generating process died"
    )


class DoneEvent(Output):
    stop_reason: str | None
    message: MessageOut | None = Field(default=None, description="the finished message")
    recovered: bool | None = None


class SnapshotEvent(Output):
    message: MessageOut


#: event type → the model of its ``data``
SSE_EVENTS: dict[str, type[Output]] = {
    "message_start": MessageStart,
    "text_delta": TextDelta,
    "thinking_delta": TextDelta,
    "tool_call": ToolCallEvent,
    "usage": UsageEvent,
    "compaction": CompactionEvent,
    "error": ErrorEvent,
    "done": DoneEvent,
    "snapshot": SnapshotEvent,
}

SSE_DESCRIPTION = (
    "Server-sent events. Each frame: `id: <seq>` (per message, from 1; absent on `snapshot` and the "
    "frame after it), `event: <type>`, `data: <JSON>`. Types and their data schemas: "
    + ", ".join(f"`{k}` → {v.__name__}" for k, v in SSE_EVENTS.items())
    + ". A `: ping` comment every 15 s. The stream ends after `done` or `error`; resume with "
    "`Last-Event-ID`."
)


def _event_schema(kind: str, model: type[Output]) -> dict[str, Any]:
    """One SSE event as OpenAPI 3.1 describes a stream's items: ``event``, ``id`` and ``data``
    (a JSON text whose schema is ``contentSchema``)."""
    return {
        "type": "object",
        "title": f"{kind} event",
        "required": ["event", "data"],
        "properties": {
            "event": {"const": kind},
            "id": {"type": "string", "description": "the event's sequence number"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": schema_ref(model),
            },
        },
    }


#: OpenAPI response entry for a ``text/event-stream`` answer: ``schema`` describes each event.
SSE_RESPONSE: dict[str, Any] = {
    "description": SSE_DESCRIPTION,
    "content": {
        "text/event-stream": {
            "schema": {"oneOf": [_event_schema(k, v) for k, v in SSE_EVENTS.items()]},
        }
    },
}

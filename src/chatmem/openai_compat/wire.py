"""Wire models of the OpenAI-compatible door, field for field from the Chat Completions API.

Requests are lenient the way OpenAI's own server is with clients: unknown parameters are ignored
(clients send ``user``, ``logprobs`` …), but what chatmem reads is validated. Responses are what
the official SDKs parse.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..contracts.base import RejectNul

MAX_MESSAGES = 10_000
MAX_STOPS = 4
#: a stop sequence: what the schema says is what the server takes
Stop = Annotated[str, Field(min_length=1, max_length=200)]


class ChatMessageIn(RejectNul):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = Field(default=None, max_length=200)
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = Field(default=None, max_length=200)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    include_usage: bool = False


class ChatCompletionRequest(RejectNul):
    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: Stop | Annotated[list[Stop], Field(max_length=MAX_STOPS)] | None = Field(
        default=None, description=f"up to {MAX_STOPS} sequences; the answer ends before the first"
    )
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    tools: list[dict[str, Any]] | None = Field(default=None, max_length=128)
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    metadata: dict[str, str] | None = Field(
        default=None,
        description="`chatmem_conversation`: the conversation to continue (like the "
        "X-Chatmem-Conversation header)",
    )
    n: int | None = Field(default=None, ge=1, le=1, description="only 1 is supported")

    @field_validator("stop")
    @classmethod
    def _stops(cls, v):
        """One sequence or a list of them: always a list (the schema bounds both)."""
        return [v] if isinstance(v, str) else list(v or [])

    def passthrough(self) -> dict[str, Any]:
        keys = (
            "temperature",
            "top_p",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "response_format",
        )
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


class FunctionCall(BaseModel):
    name: str
    arguments: str


class ToolCallOut(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[ToolCallOut] | None = None
    reasoning_content: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None


class PromptTokensDetails(BaseModel):
    cached_tokens: int = 0


class UsageOut(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: UsageOut
    system_fingerprint: str | None = None


class FunctionCallDelta(BaseModel):
    name: str | None = None
    arguments: str | None = None


class ToolCallDelta(BaseModel):
    index: int
    id: str | None = None
    type: Literal["function"] | None = None
    function: FunctionCallDelta


class Delta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCallDelta] | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: str | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    """One ``data:`` frame of a streamed answer: a delta, the closing finish_reason, or (with
    ``stream_options.include_usage``) the usage chunk, whose ``choices`` is empty."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: UsageOut | None = None
    system_fingerprint: str | None = None


class StreamErrorInfo(BaseModel):
    code: str
    message: str
    type: str


class StreamError(BaseModel):
    """The frame sent instead of the finish chunk when the model fails mid-stream."""

    error: StreamErrorInfo


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str


class ModelCards(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]

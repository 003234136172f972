"""Pydantic models written field for field from seed 000's (docs/specs.md) zod contracts (plus feedback).

Field names are the wire names (camelCase), so no aliasing can drift. Inputs follow zod's default
object semantics: unknown keys are dropped, not rejected (the seed's web client sends AI SDK UI
messages, which may carry extra keys such as ``metadata``). Outputs are strict (``extra="forbid"``)
so the tests that validate every ``/rpc`` response against them notice any stray field.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from ..contracts.base import RejectNul

T = TypeVar("T")

Role = Literal["user", "assistant"]
MessageStatus = Literal["completed", "failed"]
MemoryStatus = Literal["active", "disabled", "deleted"]
Rating = Literal["positive", "negative"]
FeedbackReason = Literal[
    "good_tone",
    "helpful",
    "warm",
    "remembered_context",
    "bad_tone",
    "too_long",
    "too_cold",
    "too_pushy",
    "wrong_memory",
    "unsafe",
    "other",
]
FEEDBACK_REASONS: tuple[str, ...] = FeedbackReason.__args__  # type: ignore[attr-defined]

NonNegInt = Annotated[int, Field(ge=0, strict=True)]


class ZodIn(RejectNul):
    """A request object: like ``z.object`` — unknown keys are stripped."""

    model_config = ConfigDict(extra="ignore")


class Out(BaseModel):
    """A response object: exactly the contract's keys."""

    model_config = ConfigDict(extra="forbid")


# ── chat request (packages/contracts/src/chat/inbox-chat.contract.ts) ───────────────────────────


#: UI messages one request may carry. Seed 000's zod caps it at 20, but the AI SDK's ``useChat``
#: resends the whole history, so a client failed at turn 11. Only the newest message is read (the
#: stored history is the truth); the request-body byte limit bounds the rest.
MAX_UI_MESSAGES = 10_000
MAX_UI_PARTS = 1_000


class UIPart(ZodIn):
    """One part of an AI SDK UI message: ``text``, or any other type the SDK emits (``step-start``,
    ``reasoning``, ``tool-*``, ``file``, ``source-url``, ``data-*`` …), accepted and ignored."""

    type: str = Field(min_length=1, max_length=200)
    text: str | None = None

    @model_validator(mode="after")
    def _text_part_has_text(self) -> UIPart:
        if self.type == "text" and self.text is None:
            raise ValueError("a text part needs a string 'text'")
        return self


class InboxChatMessage(ZodIn):
    """The AI SDK UI message the seed's web client sends (what ``useChat`` keeps per message)."""

    id: str | None = None
    role: Literal["user", "assistant", "system"]
    parts: list[UIPart] = Field(default_factory=list, max_length=MAX_UI_PARTS)

    @property
    def text(self) -> str:
        return "".join(p.text or "" for p in self.parts if p.type == "text")


class InboxChatPersona(ZodIn):
    """Display data about the agent, built by the client; the stored agent is the truth."""

    id: str | None = Field(default=None, min_length=1)
    name: str = Field(min_length=1, max_length=120)
    handle: str = Field(min_length=1, max_length=120)
    headline: str = Field(min_length=1, max_length=200)
    lastActive: str = Field(min_length=1, max_length=80)
    status: str = Field(min_length=1, max_length=80)
    relationship: str = Field(min_length=1, max_length=120)
    topic: str = Field(min_length=1, max_length=120)
    chemistry: str = Field(min_length=1, max_length=80)
    chemistryLabel: str = Field(min_length=1, max_length=80)
    rhythm: str = Field(min_length=1, max_length=80)
    profileNote: str = Field(min_length=1, max_length=2000)
    imageKey: str | None = None


class InboxChatRequest(ZodIn):
    conversationId: str | None = Field(default=None, min_length=1)
    messages: list[InboxChatMessage] = Field(min_length=1, max_length=MAX_UI_MESSAGES)
    llmConfig: dict[str, Any] | None = None  # InboxChatLlmConfigSchema: accepted, not used
    conversation: InboxChatPersona


# ── history (AgentConversationMessageSchema, AgentConversationResponseSchema) ──────────────────


class MessageFeedback(Out):
    rating: Rating
    reason: FeedbackReason | None
    note: str | None
    updatedAtMs: NonNegInt


class AgentConversationMessage(Out):
    id: str = Field(min_length=1)
    conversationId: str = Field(min_length=1)
    agentId: str = Field(min_length=1)
    role: Role
    content: str
    status: MessageStatus
    createdAtMs: NonNegInt
    feedback: MessageFeedback | None


class AgentConversationResponse(Out):
    conversationId: str = Field(min_length=1)
    agentId: str = Field(min_length=1)
    title: str | None
    summary: str | None
    messageCount: NonNegInt
    openingMessage: str | None
    messages: list[AgentConversationMessage]
    nextCursor: str | None


class AgentConversationMessagesPage(Out):
    messages: list[AgentConversationMessage]
    nextCursor: str | None


# ── memories (packages/contracts/src/agent/my-summary.contract.ts) ──────────────────────────────


class SourceMessage(Out):
    id: str = Field(min_length=1)
    role: Role
    content: str
    createdAtMs: NonNegInt


class AgentMemory(Out):
    id: str = Field(min_length=1)
    agentId: str = Field(min_length=1)
    type: str = Field(min_length=1, max_length=80)
    content: str = Field(min_length=1, max_length=2000)
    importance: int = Field(ge=1, le=5, strict=True)
    status: MemoryStatus
    sourceMessageId: str | None
    sourceMessage: SourceMessage | None
    createdAtMs: NonNegInt
    updatedAtMs: NonNegInt


class AgentMemoryList(Out):
    items: list[AgentMemory]


def _zod_int(v: Any) -> Any:
    """``z.number().int()``: a JSON number with an integral value (3 or 3.0), never a string/bool."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError("Expected number")
    if isinstance(v, float):
        if not v.is_integer():
            raise ValueError("Expected integer")
        return int(v)
    return v


ZodInt = Annotated[int, BeforeValidator(_zod_int)]


class UpdateAgentMemoryRequest(ZodIn):
    type: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)] | None
    ) = None
    content: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
        | None
    ) = None
    importance: Annotated[int, Field(ge=1, le=5), BeforeValidator(_zod_int)] | None = None
    status: Literal["active", "disabled"] | None = None


class SuccessResult(Out):
    success: Literal[True]


# ── feedback ────────────────────────────────────────────────────────────────────────────────────


class MessageFeedbackRequest(ZodIn):
    rating: Rating
    reason: FeedbackReason | None = None
    note: str | None = Field(default=None, max_length=500)


class MessageFeedbackResponse(Out):
    messageId: str = Field(min_length=1)
    feedback: MessageFeedback


# ── envelope ────────────────────────────────────────────────────────────────────────────────────


class Meta(Out):
    requestId: str = Field(min_length=1)
    timestamp: str = Field(min_length=1)  # ISO 8601 UTC, millisecond precision


class ErrorBody(Out):
    code: str = Field(min_length=1)
    message: str
    details: Any = None


class Success(Out, Generic[T]):
    ok: Literal[True]
    data: T
    meta: Meta


class Failure(Out):
    ok: Literal[False]
    error: ErrorBody
    meta: Meta

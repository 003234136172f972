"""The provider interface every model backend implements, and the events a stream yields.

A provider turns a list of chat messages into a stream of events. It knows nothing about
conversations, the database or HTTP; the generation service does the rest. Third-party providers
register a class under the ``chatmem.providers`` entry-point group; the class is constructed with
the process Settings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..unicode import scrub


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ModelInfo:
    """One entry of the model catalogue (settings), resolved before a turn starts."""

    id: str  # what users pick (e.g. "demo", "gpt-4o-mini", "fast")
    provider: str  # registry name
    label: str = ""
    upstream: str = ""  # the model name sent to the provider ('' = id)
    context_window: int = 8192
    max_output: int = 1024
    price_input: float = 0.0  # per million tokens
    price_output: float = 0.0
    price_cache_read: float = 0.0
    price_cache_write: float = 0.0
    credits_multiplier: float = 1.0
    encoding: str = "cl100k_base"
    fast: bool = False
    options: dict = field(default_factory=dict)  # provider-specific (base_url, api_key, thinking…)

    @property
    def upstream_name(self) -> str:
        return self.upstream or self.id


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class ToolCall:
    """A complete function call the model asked for (``arguments`` is its JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Finish:
    stop_reason: str = "end_turn"


ProviderEvent = TextDelta | ThinkingDelta | Usage | ToolCall | Finish


class ProviderError(Exception):
    """An upstream failure; ``code`` is one of providers/errors.py ``CODES`` (e.g.
    'rate_limited', 'upstream_truncated'), the message a short line meant for users."""

    def __init__(self, message: str, code: str = "upstream_error") -> None:
        super().__init__(message)
        self.code = code


class Provider(Protocol):
    """``stream`` yields deltas, at most one Usage (may come last) and a final Finish.

    A provider that sets ``accepts_options = True`` is also called with ``options=``: request
    parameters of an OpenAI-compatible call to pass upstream where it can (``stop``, ``tools``,
    ``tool_choice``, ``parallel_tool_calls``, ``temperature``, ``top_p``, ``seed``,
    ``presence_penalty``, ``frequency_penalty``, ``response_format``) and ``tool_messages``
    (the OpenAI-format messages of a tool round-trip that follow the assembled context). Others
    are never passed options (``stop`` is applied by the turn for every provider)."""

    name: str

    def stream(
        self, model: ModelInfo, messages: list[ChatMessage], *, max_tokens: int
    ) -> AsyncIterator[ProviderEvent]: ...


def estimate_tokens(text: str) -> int:
    """About four characters per token: the demo provider's usage, and the fallback when a
    provider reported no usage (real counting is context/tokens.py)."""
    return (len(text) + 3) // 4 if text else 0


async def complete(
    provider: Provider, model: ModelInfo, messages: list[ChatMessage], *, max_tokens: int
) -> str:
    """Run a stream to the end and return its text (titles, summaries, extraction), made
    storable (no NUL, no lone surrogates: see unicode.py)."""
    stream = provider.stream(model, messages, max_tokens=max_tokens)
    return scrub("".join([ev.text async for ev in stream if isinstance(ev, TextDelta)]))

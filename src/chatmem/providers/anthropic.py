"""Anthropic provider: the Messages API streamed through the official SDK.

Text and thinking deltas are forwarded as they arrive; usage is taken from ``message_start``
(input, cache read, cache write) and updated from ``message_delta`` (output, and any later input
counts), then reported once at the end. System messages become the ``system`` parameter. A model's
``options.thinking_budget`` (tokens) turns extended thinking on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anthropic

from . import errors as perr
from .base import (
    ChatMessage,
    Finish,
    ModelInfo,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    Usage,
)


def provider_error(exc: Exception, *, started: bool) -> ProviderError:
    """Map what the SDK raised onto the one vocabulary (errors.py); ``started``: some output
    had arrived, so a dropped connection truncated the answer."""
    if isinstance(exc, anthropic.APIStatusError):
        code = perr.code_for_status(exc.status_code)
        err = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
        if isinstance(err, dict) and err.get("type") == "overloaded_error":
            code = "upstream_overloaded"
        detail = err.get("message") if isinstance(err, dict) else None
        detail = detail if isinstance(detail, str) else f"HTTP {exc.status_code}"
        return ProviderError(perr.message("anthropic", code, detail), code)
    if isinstance(exc, anthropic.APITimeoutError):
        code = "upstream_truncated" if started else "upstream_timeout"
    elif isinstance(exc, anthropic.APIConnectionError):
        code = "upstream_truncated" if started else "upstream_unreachable"
    elif isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
        code = "upstream_bad_response"  # malformed JSON in an event, an unexpected shape
    elif type(exc).__module__.split(".")[0] in ("httpx", "httpcore", "httpx2"):
        code = "upstream_truncated" if started else "upstream_unreachable"
    else:
        code = "upstream_error"
    return ProviderError(perr.message("anthropic", code), code)


def split_system(messages: list[ChatMessage]) -> tuple[str, list[dict]]:
    """Anthropic takes the system prompt apart and wants alternating user/assistant turns."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict] = []
    for m in messages:
        if m.role == "system":
            continue
        if turns and turns[-1]["role"] == m.role:
            turns[-1]["content"] += "\n\n" + m.content
        else:
            turns.append({"role": m.role, "content": m.content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "(conversation start)"})
    return system, turns


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, settings=None, *, http_client=None) -> None:
        self.api_key = getattr(settings, "anthropic_api_key", "") or ""
        self.base_url = getattr(settings, "anthropic_base_url", "") or None
        self._http = http_client  # an httpx2.AsyncClient (what this SDK requires), for tests
        self._clients: dict[tuple, anthropic.AsyncAnthropic] = {}

    def _client(self, model: ModelInfo) -> anthropic.AsyncAnthropic:
        base_url = model.options.get("base_url") or self.base_url
        api_key = model.options.get("api_key") or self.api_key or "not-set"
        key = (base_url, api_key)
        if key not in self._clients:
            kw = {"http_client": self._http} if self._http is not None else {}
            retries = int(model.options.get("max_retries", 1))
            self._clients[key] = anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=retries, **kw
            )
        return self._clients[key]

    async def stream(
        self, model: ModelInfo, messages: list[ChatMessage], *, max_tokens: int
    ) -> AsyncIterator[ProviderEvent]:
        client = self._client(model)
        params = _request(model, messages, max_tokens)
        usage = {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        }
        stop = "end_turn"
        stopped = False  # message_stop seen: without it the stream was cut short
        started = False
        try:
            stream = await client.messages.create(**params)
            async for ev in stream:
                started = True
                if ev.type == "message_stop":
                    stopped = True
                elif ev.type == "message_start":
                    u = ev.message.usage
                    usage["input_tokens"] = u.input_tokens or 0
                    usage["output_tokens"] = u.output_tokens or 0
                    usage["cache_read_tokens"] = u.cache_read_input_tokens or 0
                    usage["cache_write_tokens"] = u.cache_creation_input_tokens or 0
                elif ev.type == "content_block_delta":
                    d = ev.delta
                    if d.type == "text_delta" and d.text:
                        yield TextDelta(d.text)
                    elif d.type == "thinking_delta" and d.thinking:
                        yield ThinkingDelta(d.thinking)
                elif ev.type == "message_delta":
                    u = ev.usage
                    usage["output_tokens"] = u.output_tokens or usage["output_tokens"]
                    if u.input_tokens:
                        usage["input_tokens"] = u.input_tokens
                    if u.cache_read_input_tokens:
                        usage["cache_read_tokens"] = u.cache_read_input_tokens
                    if u.cache_creation_input_tokens:
                        usage["cache_write_tokens"] = u.cache_creation_input_tokens
                    if ev.delta.stop_reason:
                        stop = ev.delta.stop_reason
        except ProviderError:
            raise
        except Exception as e:  # never a raw exception text in a stored error
            raise provider_error(e, started=started) from e
        if not stopped:
            yield Usage(**usage)  # what was used is still billed
            msg = perr.message("anthropic", "upstream_truncated")
            raise ProviderError(msg, "upstream_truncated")
        yield Usage(**usage)
        yield Finish(stop)

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.close()
        self._clients.clear()


def _request(model: ModelInfo, messages: list[ChatMessage], max_tokens: int) -> dict:
    """The streaming Messages request: the system prompt apart, the token limit (raised above an
    extended-thinking budget when the model has one)."""
    system, turns = split_system(messages)
    params: dict = dict(
        model=model.upstream_name,
        messages=turns,
        stream=True,
        max_tokens=max_tokens or model.max_output,
    )
    if system:
        params["system"] = system
    budget = int(model.options.get("thinking_budget", 0) or 0)
    if budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = max(params["max_tokens"], budget + 1024)
    return params

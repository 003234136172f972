"""OpenAI-compatible provider: streaming Chat Completions through the official SDK.

Works against any OpenAI-compatible base URL (OpenAI, Ollama, vLLM, llama.cpp server …). Text
deltas become ``TextDelta``; reasoning deltas (``reasoning_content`` or ``reasoning``, as DeepSeek,
vLLM and Ollama send them) become ``ThinkingDelta``; the final usage chunk (``include_usage``)
becomes ``Usage``. Per-model ``options`` may override ``base_url`` and ``api_key``.

The SDK is given an ``httpx.AsyncClient`` we build (the SDK accepts one), so the HTTP layer is the
standard httpx stack: deployments can proxy it and tests mock it with respx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai

from . import errors as perr
from .base import (
    ChatMessage,
    Finish,
    ModelInfo,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)

#: Request parameters of an OpenAI-compatible call passed through upstream as they are.
PASSTHROUGH = (
    "stop",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
)

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


def provider_error(exc: Exception, *, started: bool) -> ProviderError:
    """Map what the SDK (or httpx under it) raised onto the one vocabulary (errors.py).
    ``started``: some output had arrived, so a dropped connection truncated the answer."""
    if isinstance(exc, openai.APIStatusError):
        code = perr.code_for_status(exc.status_code)
        return ProviderError(perr.message("openai", code, _upstream_detail(exc)), code)
    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
        code = "upstream_truncated" if started else "upstream_timeout"
    elif isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
        code = "upstream_truncated" if started else "upstream_unreachable"
    elif isinstance(exc, (ValueError, TypeError, KeyError, openai.APIResponseValidationError)):
        code = "upstream_bad_response"  # malformed JSON in a chunk, an unexpected shape
    elif isinstance(exc, openai.APIError):  # an error event inside the stream
        return ProviderError(
            perr.message("openai", "upstream_error", exc.message), "upstream_error"
        )
    else:
        code = "upstream_error"
    return ProviderError(perr.message("openai", code), code)


def _upstream_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return f"HTTP {exc.status_code}"


def _reasoning(delta) -> str:
    extra = getattr(delta, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = getattr(delta, key, None) or extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _tool_calls(parts: dict[int, dict]) -> list[ToolCall]:
    """Complete calls from the streamed fragments (id and name come first, arguments in pieces)."""
    return [
        ToolCall(p.get("id") or f"call_{i}", p.get("name") or "", "".join(p["arguments"]))
        for i, p in sorted(parts.items())
    ]


def _replace_tool_turn(wire: list[dict], tool_messages: list[dict]) -> list[dict]:
    """The assembled context ends with the stored plain-text copies of a tool round-trip (the
    answer that called tools, text-less, and the results as the new user turn); upstream gets
    the structured originals instead."""
    out = wire[:-1] if wire and wire[-1]["role"] == "user" else list(wire)
    if out and out[-1]["role"] == "assistant" and not out[-1]["content"]:
        out = out[:-1]
    return [*out, *tool_messages]


class OpenAIProvider:
    name = "openai"
    accepts_options = True

    def __init__(self, settings=None, *, http_client: httpx.AsyncClient | None = None) -> None:
        self.api_key = getattr(settings, "openai_api_key", "") or ""
        self.base_url = getattr(settings, "openai_base_url", "") or None
        self._http = http_client
        self._clients: dict[tuple, openai.AsyncOpenAI] = {}

    def _client(self, model: ModelInfo) -> openai.AsyncOpenAI:
        base_url = model.options.get("base_url") or self.base_url
        api_key = model.options.get("api_key") or self.api_key or "not-needed"
        key = (base_url, api_key)
        if key not in self._clients:
            if self._http is None:
                self._http = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0))
            retries = int(model.options.get("max_retries", 1))
            self._clients[key] = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                # openai>=3 is typed against its httpx fork; the httpx client works at run time
                http_client=self._http,  # type: ignore[arg-type]
                max_retries=retries,
            )
        return self._clients[key]

    async def stream(
        self,
        model: ModelInfo,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        options: dict | None = None,
    ) -> AsyncIterator[ProviderEvent]:
        client = self._client(model)
        params = _request(model, messages, max_tokens, options or {})
        finish = None  # a stream that ends without any finish_reason was cut short
        started = False
        calls: dict[int, dict] = {}
        try:
            stream = await client.chat.completions.create(**params)
            async for chunk in stream:
                started = True
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None:
                        thinking = _reasoning(delta)
                        if thinking:
                            yield ThinkingDelta(thinking)
                        if delta.content:
                            yield TextDelta(delta.content)
                        for tc in delta.tool_calls or ():
                            _add_tool_call_part(calls, tc)
                    if choice.finish_reason:
                        finish = STOP_REASONS.get(choice.finish_reason, choice.finish_reason)
                if chunk.usage is not None:
                    u = chunk.usage
                    details = getattr(u, "prompt_tokens_details", None)
                    cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
                    yield Usage(
                        input_tokens=(u.prompt_tokens or 0) - cached,
                        output_tokens=u.completion_tokens or 0,
                        cache_read_tokens=cached,
                    )
        except ProviderError:
            raise
        except Exception as e:  # never a raw exception text in a stored error
            raise provider_error(e, started=started) from e
        if finish is None:
            raise ProviderError(perr.message("openai", "upstream_truncated"), "upstream_truncated")
        for call in _tool_calls(calls):
            yield call
        yield Finish(finish)

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.close()
        self._clients.clear()
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _request(
    model: ModelInfo, messages: list[ChatMessage], max_tokens: int, options: dict
) -> dict[str, Any]:
    """The streaming Chat Completions request: the messages (a tool turn replayed in place), the
    passthrough options, and the token limit under the parameter name the model takes."""
    wire = [{"role": m.role, "content": m.content} for m in messages]
    tool_messages = list(options.get("tool_messages") or ())
    if tool_messages:
        wire = _replace_tool_turn(wire, tool_messages)
    params: dict[str, Any] = dict(
        model=model.upstream_name,
        stream=True,
        messages=wire,
        stream_options={"include_usage": True},
        **{k: options[k] for k in PASSTHROUGH if options.get(k) is not None},
    )
    token_param = model.options.get("max_tokens_param", "max_tokens")
    if max_tokens:
        params[token_param] = max_tokens
    return params


def _add_tool_call_part(calls: dict[int, dict], tc: Any) -> None:
    """Accumulate one streamed tool-call delta (id, name, argument text) under its index."""
    part = calls.setdefault(tc.index, {"arguments": []})
    if tc.id:
        part["id"] = tc.id
    if tc.function is not None:
        if tc.function.name:
            part["name"] = tc.function.name
        if tc.function.arguments:
            part["arguments"].append(tc.function.arguments)

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

import httpx
import openai

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

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


def error_code(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "upstream_auth"
    if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
        return "upstream_unreachable"
    return "upstream_error"


def _reasoning(delta) -> str:
    extra = getattr(delta, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = getattr(delta, key, None) or extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


class OpenAIProvider:
    name = "openai"

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
                api_key=api_key, base_url=base_url, http_client=self._http, max_retries=retries
            )
        return self._clients[key]

    async def stream(
        self, model: ModelInfo, messages: list[ChatMessage], *, max_tokens: int
    ) -> AsyncIterator[ProviderEvent]:
        client = self._client(model)
        params = dict(
            model=model.upstream_name,
            stream=True,
            messages=[{"role": m.role, "content": m.content} for m in messages],
            stream_options={"include_usage": True},
        )
        token_param = model.options.get("max_tokens_param", "max_tokens")
        if max_tokens:
            params[token_param] = max_tokens
        finish = "end_turn"
        try:
            stream = await client.chat.completions.create(**params)
            async for chunk in stream:
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None:
                        thinking = _reasoning(delta)
                        if thinking:
                            yield ThinkingDelta(thinking)
                        if delta.content:
                            yield TextDelta(delta.content)
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
        except openai.APIError as e:
            raise ProviderError(f"openai: {e.message}", error_code(e)) from e
        except httpx.HTTPError as e:
            raise ProviderError(f"openai: {e}", "upstream_unreachable") from e
        yield Finish(finish)

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.close()
        self._clients.clear()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

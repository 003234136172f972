"""Providers: the demo's reply logic, the catalogue/registry, and the real OpenAI and Anthropic SDK
clients streaming against respx-mocked HTTP (text, thinking, usage, errors before and mid-stream),
plus a whole turn through the app with the OpenAI provider."""

from __future__ import annotations

import json

import httpx
import httpx2
import pytest
import respx

from chatmem.config import Settings
from chatmem.errors import Unprocessable
from chatmem.providers.anthropic import AnthropicProvider, split_system
from chatmem.providers.base import (
    ChatMessage,
    Finish,
    ModelInfo,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    Usage,
    complete,
)
from chatmem.providers.demo import DemoProvider, compose_reply, find_memories, find_summary
from chatmem.providers.openai import OpenAIProvider
from chatmem.providers.registry import Registry, build_catalogue
from tests.test_generation import client_for, deltas, new_conv, stream

BASE = "http://llm.test/v1"
MSGS = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi there")]


async def collect(agen) -> list:
    return [e async for e in agen]


# ── demo ────────────────────────────────────────────────────────────────────────────────────────


def test_demo_reply_names_question_memories_and_summary():
    msgs = [
        ChatMessage(
            "system",
            "You are helpful.\n\nWhat you remember about the user:\n"
            "- [CURRENT] Lives in Lisbon\n- Prefers tea\n\nRules: be kind",
        ),
        ChatMessage("user", "<conversation-summary>We planned a trip.</conversation-summary>\nHi"),
        ChatMessage("assistant", "Hello"),
        ChatMessage("user", "Where do I live?"),
    ]
    assert find_memories(msgs) == ["Lives in Lisbon", "Prefers tea"]
    assert find_summary(msgs) == "We planned a trip."
    reply = compose_reply(msgs, min_tokens=40)
    assert reply.startswith('You asked: "Where do I live?".')
    assert "Lives in Lisbon; Prefers tea" in reply and "We planned a trip." in reply
    assert "message 2 from you" in reply
    assert len(reply.split()) >= 40
    assert compose_reply(msgs, 40) == reply  # deterministic


async def test_demo_streams_tokens_with_usage():
    p = DemoProvider(Settings(demo_delay_ms=0, demo_min_tokens=50))
    model = ModelInfo(id="demo", provider="demo")
    events = await collect(p.stream(model, MSGS, max_tokens=1000))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 50 and isinstance(events[-1], Finish)
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage.output_tokens == len(deltas) and usage.input_tokens > 0
    short = await collect(p.stream(model, MSGS, max_tokens=5))
    assert len([e for e in short if isinstance(e, TextDelta)]) == 5
    assert short[-1] == Finish("max_tokens")
    assert (await complete(p, model, MSGS, max_tokens=1000)).startswith('You asked: "Hi there"')


# ── catalogue and registry ─────────────────────────────────────────────────────────────────────


def test_catalogue_defaults_presets_and_fast_alias(tmp_path):
    models, default, fast = build_catalogue(Settings())
    assert list(models) == ["demo"] and default == fast == "demo"
    s = Settings(openai_api_key="sk-x", anthropic_api_key="ak")
    models, default, _ = build_catalogue(s)
    assert set(models) == {"demo", "gpt-4o-mini", "claude-sonnet-4-5"}
    assert default == "gpt-4o-mini"
    f = tmp_path / "models.toml"
    f.write_text(
        '[[models]]\nid = "local"\nprovider = "openai"\ncontext_window = 4096\n'
        'options = { base_url = "http://localhost:11434/v1" }\n'
    )
    reg = Registry(Settings(models_file=str(f), fast_model="local", default_model="demo"))
    assert reg.resolve(None).id == "demo"
    fast_model = reg.resolve("fast")
    assert fast_model.id == "local" and fast_model.fast and fast_model.context_window == 4096
    assert reg.resolve("local").options["base_url"] == "http://localhost:11434/v1"
    with pytest.raises(Unprocessable) as e:
        reg.resolve("nope")
    assert e.value.code == "unknown_model"
    assert isinstance(reg.provider("demo"), DemoProvider)  # loaded through the entry point
    assert isinstance(reg.provider("openai"), OpenAIProvider)
    with pytest.raises(Unprocessable):
        reg.provider("not-installed")
    for bad in (
        [{"id": "x"}],
        [{"id": "fast", "provider": "demo"}],
        [{"id": "x", "provider": "demo", "colour": "red"}],
    ):
        with pytest.raises(ValueError):
            build_catalogue(Settings(models=bad))
    with pytest.raises(ValueError):
        build_catalogue(Settings(default_model="missing"))


def test_catalogue_from_env_json(monkeypatch):
    monkeypatch.setenv(
        "CHATMEM_MODELS", json.dumps([{"id": "m1", "provider": "anthropic", "price_input": 3}])
    )
    models, default, _ = build_catalogue(Settings())
    assert models["m1"].price_input == 3 and default == "m1"


# ── OpenAI (real SDK, respx-mocked HTTP) ────────────────────────────────────────────────────────


def oa_chunk(delta=None, finish=None, usage=None, choices=True) -> str:
    body = {
        "id": "cc-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else [],
    }
    if usage:
        body["usage"] = usage
    return "data: " + json.dumps(body) + "\n\n"


OA_STREAM = "".join(
    [
        oa_chunk({"role": "assistant", "reasoning_content": "Thinking about "}),
        oa_chunk({"reasoning": "greetings."}),
        oa_chunk({"content": "Hello"}),
        oa_chunk({"content": ", world"}),
        oa_chunk({}, finish="length"),
        oa_chunk(
            choices=False,
            usage={
                "prompt_tokens": 12,
                "completion_tokens": 3,
                "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 4},
            },
        ),
        "data: [DONE]\n\n",
    ]
)
OA_MODEL = ModelInfo(
    id="gpt-test",
    provider="openai",
    upstream="gpt-4o-mini",
    options={"base_url": BASE, "api_key": "sk-test", "max_retries": 0},
)


def sse_response(body: str, status: int = 200) -> httpx.Response:
    return httpx.Response(status, text=body, headers={"content-type": "text/event-stream"})


@respx.mock(assert_all_mocked=True)
async def test_openai_stream_text_reasoning_usage(respx_mock):
    route = respx_mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(OA_STREAM))
    p = OpenAIProvider(Settings())
    try:
        events = await collect(p.stream(OA_MODEL, MSGS, max_tokens=64))
    finally:
        await p.aclose()
    assert events == [
        ThinkingDelta("Thinking about "),
        ThinkingDelta("greetings."),
        TextDelta("Hello"),
        TextDelta(", world"),
        Usage(input_tokens=8, output_tokens=3, cache_read_tokens=4),
        Finish("max_tokens"),
    ]
    sent = json.loads(route.calls.last.request.content)
    assert sent["model"] == "gpt-4o-mini" and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True} and sent["max_tokens"] == 64
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi there"},
    ]
    assert route.calls.last.request.headers["authorization"] == "Bearer sk-test"


@respx.mock
async def test_openai_errors_before_and_mid_stream(respx_mock):
    p = OpenAIProvider(Settings())
    respx_mock.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(
            429, json={"error": {"message": "slow down", "type": "rate_limit"}}
        )
    )
    with pytest.raises(ProviderError) as e:
        await collect(p.stream(OA_MODEL, MSGS, max_tokens=10))
    assert e.value.code == "rate_limited" and "slow down" in str(e.value)
    mid = (
        oa_chunk({"content": "Hal"})
        + 'data: {"error": {"message": "model crashed", "type": "server_error"}}\n\n'
    )
    respx_mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(mid))
    got = []
    with pytest.raises(ProviderError) as e:
        async for ev in p.stream(OA_MODEL, MSGS, max_tokens=10):
            got.append(ev)
    assert got == [TextDelta("Hal")] and "model crashed" in str(e.value)
    respx_mock.post(f"{BASE}/chat/completions").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderError) as e:
        await collect(p.stream(OA_MODEL, MSGS, max_tokens=10))
    assert e.value.code == "upstream_unreachable"
    await p.aclose()


# ── Anthropic (real SDK, respx routes behind the SDK's httpx2 transport) ────────────────────────


class RespxBridge(httpx2.AsyncBaseTransport):
    """The anthropic SDK only accepts an ``httpx2`` client; this transport hands its requests to a
    respx router, so the SDK runs unmodified against respx-mocked HTTP."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.router = router

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        req = httpx.Request(
            request.method, str(request.url), headers=request.headers.raw, content=body
        )
        resp = await self.router.async_handler(req)
        return httpx2.Response(
            resp.status_code, headers=resp.headers.raw, content=await resp.aread()
        )


def an_event(kind: str, **data) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


AN_START = an_event(
    "message_start",
    message={
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 20,
            "output_tokens": 1,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 7,
        },
    },
)
AN_STREAM = "".join(
    [
        AN_START,
        an_event(
            "content_block_start",
            index=0,
            content_block={"type": "thinking", "thinking": "", "signature": ""},
        ),
        an_event(
            "content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hmm, "}
        ),
        an_event(
            "content_block_delta",
            index=0,
            delta={"type": "thinking_delta", "thinking": "a greeting."},
        ),
        an_event(
            "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "sig"}
        ),
        an_event("content_block_stop", index=0),
        an_event("content_block_start", index=1, content_block={"type": "text", "text": ""}),
        an_event("content_block_delta", index=1, delta={"type": "text_delta", "text": "Hi"}),
        an_event("content_block_delta", index=1, delta={"type": "text_delta", "text": " you"}),
        an_event("content_block_stop", index=1),
        an_event(
            "message_delta",
            delta={"stop_reason": "end_turn", "stop_sequence": None},
            usage={"output_tokens": 15},
        ),
        an_event("message_stop"),
    ]
)
AN_MODEL = ModelInfo(
    id="claude-test",
    provider="anthropic",
    max_output=256,
    options={
        "base_url": "http://anthropic.test",
        "api_key": "ak-test",
        "max_retries": 0,
        "thinking_budget": 1024,
    },
)


async def test_anthropic_stream_thinking_text_usage():
    router = respx.MockRouter(assert_all_called=False)
    route = router.post("http://anthropic.test/v1/messages").mock(
        return_value=sse_response(AN_STREAM)
    )
    p = AnthropicProvider(Settings(), http_client=httpx2.AsyncClient(transport=RespxBridge(router)))
    try:
        events = await collect(p.stream(AN_MODEL, MSGS, max_tokens=256))
    finally:
        await p.aclose()
    assert events == [
        ThinkingDelta("Hmm, "),
        ThinkingDelta("a greeting."),
        TextDelta("Hi"),
        TextDelta(" you"),
        Usage(input_tokens=20, output_tokens=15, cache_read_tokens=5, cache_write_tokens=7),
        Finish("end_turn"),
    ]
    sent = json.loads(route.calls.last.request.content)
    assert sent["system"] == "Be brief." and sent["messages"] == [
        {"role": "user", "content": "Hi there"}
    ]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert sent["max_tokens"] == 1024 + 1024 and sent["stream"] is True
    headers = route.calls.last.request.headers
    assert "ak-test" in headers.get("x-api-key", "") + headers.get("authorization", "")


async def test_anthropic_errors_before_and_mid_stream():
    router = respx.MockRouter(assert_all_called=False)
    p = AnthropicProvider(Settings(), http_client=httpx2.AsyncClient(transport=RespxBridge(router)))
    url = "http://anthropic.test/v1/messages"
    mid = (
        AN_START
        + an_event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        + an_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Par"})
        + an_event("error", error={"type": "overloaded_error", "message": "Overloaded"})
    )
    router.post(url).mock(return_value=sse_response(mid))
    got = []
    with pytest.raises(ProviderError) as e:
        async for ev in p.stream(AN_MODEL, MSGS, max_tokens=256):
            got.append(ev)
    assert got == [TextDelta("Par")] and "Overloaded" in str(e.value)
    router.post(url).mock(
        return_value=httpx.Response(
            401,
            json={"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
        )
    )
    with pytest.raises(ProviderError) as e:
        await collect(p.stream(AN_MODEL, MSGS, max_tokens=256))
    assert e.value.code == "upstream_auth"
    await p.aclose()


def test_split_system_merges_roles():
    system, turns = split_system(
        [
            ChatMessage("system", "a"),
            ChatMessage("assistant", "hello"),
            ChatMessage("user", "x"),
            ChatMessage("user", "y"),
        ]
    )
    assert system == "a"
    assert turns == [
        {"role": "user", "content": "(conversation start)"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "x\n\ny"},
    ]


# ── a whole turn through the app with the OpenAI provider ──────────────────────────────────────


async def test_turn_with_openai_provider(db_url):
    from contextlib import asynccontextmanager  # noqa: F401

    from chatmem.app import create_app
    from tests.conftest import make_settings

    settings = make_settings(
        db_url,
        default_model="gpt-test",
        models=[
            {
                "id": "gpt-test",
                "provider": "openai",
                "label": "GPT Test",
                "upstream": "gpt-4o-mini",
                "price_input": 1.0,
                "price_output": 10.0,
                "price_cache_read": 0.5,
                "options": {"base_url": BASE, "api_key": "sk-test", "max_retries": 0},
            }
        ],
    )
    application = create_app(settings)
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(OA_STREAM))
        async with application.router.lifespan_context(application):
            async with client_for(application) as c:
                cid = await new_conv(c)
                r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "Hi"})
                mid = r.json()["assistant_message_id"]
                events = await stream(c, cid, mid)
                # the upstream's two thinking and two text chunks, in order; chunks that one
                # flush writes together are one event (events.LiveLog, MERGED)
                kinds = [e["type"] for e in events]
                runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
                assert runs == ["message_start", "thinking_delta", "text_delta", "usage", "done"]
                assert "".join(
                    e["data"]["text"] for e in events if e["type"] == "thinking_delta"
                ) == ("Thinking about greetings.")
                assert deltas(events) == "Hello, world"
                msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
                assert msg["blocks"] == [
                    {"kind": "thinking", "text": "Thinking about greetings."},
                    {"kind": "text", "text": "Hello, world"},
                ]
                assert msg["text"] == "Hello, world" and msg["stop_reason"] == "max_tokens"
                assert msg["usage"]["input_tokens"] == 8 and msg["usage"]["cache_read_tokens"] == 4
                assert msg["provider"] == "openai" and msg["model_label"] == "GPT Test"
                # (8*1 + 3*10 + 4*0.5) / 1e6 USD × 1000 credits/USD
                assert msg["credits"] == pytest.approx(0.04)
                # the turn is the first upstream call (the worker's memory job may follow it)
                sent = json.loads(route.calls[0].request.content)
                assert sent["messages"][-1] == {"role": "user", "content": "Hi"}
                # with a real model configured, the title job asks the model for the title
                from chatmem.generation.titles import title_job

                await title_job(application.state.runtime, {"conversation_id": cid})
                assert (await c.get(f"/api/conversations/{cid}")).json()["title"] == "Hello, world"
                # the worker may run the memory-extraction job against the same route meanwhile
                prompts = [
                    json.loads(call.request.content)["messages"][0]["content"]
                    for call in route.calls
                ]
                titled = [p for p in prompts if p.startswith("Write a title")]
                assert titled and titled[-1].endswith("Hi")

"""A broken upstream (issue 10): an OpenAI- or Anthropic-compatible stream that just ends (no
finish reason / no ``[DONE]``, no ``message_stop``) is ``upstream_truncated`` — the answer ends
``status: error``, ``stop_reason: error`` with the partial text kept — never ``complete``; a
malformed chunk is ``upstream_bad_response`` with our message, never a ``JSONDecodeError``'s
text; every provider speaks one error vocabulary. Real SDKs against respx-mocked HTTP; the full
turns run on SQLite and PostgreSQL."""

from __future__ import annotations

import httpx
import httpx2
import pytest
import respx

from chatmem.app import create_app
from chatmem.config import Settings
from chatmem.providers import errors as perr
from chatmem.providers.anthropic import AnthropicProvider
from chatmem.providers.base import ProviderError, TextDelta
from chatmem.providers.openai import OpenAIProvider
from tests.conftest import make_settings
from tests.test_generation import client_for, new_conv, stream
from tests.test_providers import (
    AN_MODEL,
    AN_START,
    BASE,
    MSGS,
    OA_MODEL,
    RespxBridge,
    an_event,
    oa_chunk,
    sse_response,
)

OA_TRUNCATED = oa_chunk({"role": "assistant", "content": "Half an "}) + oa_chunk(
    {"content": "answer"}
)
OA_MALFORMED = oa_chunk({"content": "Half"}) + 'data: {"choices": [{"delta": \n\n'
AN_TRUNCATED = (
    AN_START
    + an_event("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + an_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Half an "})
    + an_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "answer"})
)
AN_MALFORMED = (
    AN_START
    + an_event("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + an_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Half"})
    + 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": \n\n'
)
RAW = ("JSONDecodeError", "Expecting", "Traceback", "line 1 column")


async def _drain(agen) -> tuple[list, ProviderError]:
    got = []
    with pytest.raises(ProviderError) as e:
        async for ev in agen:
            got.append(ev)
    return got, e.value


def _anthropic(router) -> AnthropicProvider:
    return AnthropicProvider(
        Settings(), http_client=httpx2.AsyncClient(transport=RespxBridge(router))
    )


@respx.mock
async def test_openai_stream_without_finish_is_truncated(respx_mock):
    p = OpenAIProvider(Settings())
    try:
        for body in (OA_TRUNCATED, OA_TRUNCATED + "data: [DONE]\n\n"):
            respx_mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(body))
            got, err = await _drain(p.stream(OA_MODEL, MSGS, max_tokens=10))
            assert [e for e in got if isinstance(e, TextDelta)] == [
                TextDelta("Half an "),
                TextDelta("answer"),
            ]
            assert err.code == "upstream_truncated" and str(err).startswith("openai: ")
        respx_mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(OA_MALFORMED))
        got, err = await _drain(p.stream(OA_MODEL, MSGS, max_tokens=10))
        assert got == [TextDelta("Half")] and err.code == "upstream_bad_response"
        assert not any(r in str(err) for r in RAW), str(err)
    finally:
        await p.aclose()


async def test_anthropic_stream_without_message_stop_is_truncated():
    router = respx.MockRouter(assert_all_called=False)
    url = "http://anthropic.test/v1/messages"
    p = _anthropic(router)
    try:
        router.post(url).mock(return_value=sse_response(AN_TRUNCATED))
        got, err = await _drain(p.stream(AN_MODEL, MSGS, max_tokens=256))
        assert [e for e in got if isinstance(e, TextDelta)] == [
            TextDelta("Half an "),
            TextDelta("answer"),
        ]
        assert err.code == "upstream_truncated" and str(err).startswith("anthropic: ")
        router.post(url).mock(return_value=sse_response(AN_MALFORMED))
        got, err = await _drain(p.stream(AN_MODEL, MSGS, max_tokens=256))
        assert [e for e in got if isinstance(e, TextDelta)] == [TextDelta("Half")]
        assert err.code == "upstream_bad_response"
        assert not any(r in str(err) for r in RAW), str(err)
    finally:
        await p.aclose()


@respx.mock
async def test_the_same_failure_has_the_same_code_on_every_provider(respx_mock):
    """429, 401, 400, 500, 503/529 and a refused connection: one code each, whichever SDK."""
    router = respx.MockRouter(assert_all_called=False)
    an_url = "http://anthropic.test/v1/messages"
    oa, an = OpenAIProvider(Settings()), _anthropic(router)
    cases = [
        (429, "rate_limited"),
        (401, "upstream_auth"),
        (400, "upstream_bad_request"),
        (500, "upstream_error"),
        (503, "upstream_overloaded"),
    ]
    try:
        for status, code in cases:
            body = {"type": "error", "error": {"type": "x", "message": f"m{status}"}}
            respx_mock.post(f"{BASE}/chat/completions").mock(
                return_value=httpx.Response(status, json=body)
            )
            router.post(an_url).mock(return_value=httpx.Response(status, json=body))
            for p, model in ((oa, OA_MODEL), (an, AN_MODEL)):
                _, err = await _drain(p.stream(model, MSGS, max_tokens=10))
                assert err.code == code, (p.name, status, err.code)
                assert f"m{status}" in str(err)  # the upstream's own one-liner, kept short
        respx_mock.post(f"{BASE}/chat/completions").mock(side_effect=httpx.ConnectError("no"))
        router.post(an_url).mock(side_effect=httpx.ConnectError("no"))
        for p, model in ((oa, OA_MODEL), (an, AN_MODEL)):
            _, err = await _drain(p.stream(model, MSGS, max_tokens=10))
            assert err.code == "upstream_unreachable", (p.name, err.code)
    finally:
        await oa.aclose()
        await an.aclose()
    assert set(perr.CODES) >= {c for _, c in cases}


MODELS = [
    {
        "id": "oa",
        "provider": "openai",
        "options": {"base_url": BASE, "api_key": "k", "max_retries": 0},
    },
    {"id": "an", "provider": "anthropic", "max_output": 256, "options": AN_MODEL.options},
]


@pytest.mark.parametrize("model", ["oa", "an"])
async def test_a_truncated_turn_ends_in_error_with_its_partial_text(db_url, model):
    application = create_app(make_settings(db_url, models=MODELS, default_model="demo"))
    router = respx.MockRouter(assert_all_called=False)
    router.post("http://anthropic.test/v1/messages").mock(return_value=sse_response(AN_TRUNCATED))
    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{BASE}/chat/completions").mock(return_value=sse_response(OA_TRUNCATED))
        async with application.router.lifespan_context(application):
            application.state.runtime.providers.register("anthropic", _anthropic(router))
            async with client_for(application) as c:
                cid = await new_conv(c)
                r = await c.post(
                    f"/api/conversations/{cid}/messages", json={"content": "Hi", "model": model}
                )
                mid = r.json()["assistant_message_id"]
                events = await stream(c, cid, mid)
                msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
    assert events[-1]["type"] == "error"
    assert events[-1]["data"]["code"] == "upstream_truncated"
    assert msg["status"] == "error" and msg["stop_reason"] == "error"
    assert msg["text"] == "Half an answer"  # the partial text is kept
    assert (
        msg["blocks"][-1]["kind"] == "error" and msg["blocks"][-1]["code"] == "upstream_truncated"
    )
    assert msg["error"] == events[-1]["data"]["message"] and "truncat" not in msg["text"]
    assert not any(r in msg["error"] for r in RAW)


class CrashingProvider:
    name = "crashing"

    async def stream(self, model, messages, *, max_tokens):
        yield TextDelta("so far")
        raise ValueError("Expecting value: line 1 column 5 (char 4) — internal detail")


async def test_a_crashing_provider_never_leaks_its_exception_text(db_url):
    application = create_app(
        make_settings(db_url, models=[{"id": "crash", "provider": "crashing"}])
    )
    async with application.router.lifespan_context(application):
        application.state.runtime.providers.register("crashing", CrashingProvider())
        async with client_for(application) as c:
            cid = await new_conv(c)
            r = await c.post(
                f"/api/conversations/{cid}/messages", json={"content": "Hi", "model": "crash"}
            )
            mid = r.json()["assistant_message_id"]
            events = await stream(c, cid, mid)
            msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
    assert events[-1]["data"]["code"] == "provider_crashed"
    assert msg["text"] == "so far" and msg["status"] == "error"
    assert "internal detail" not in msg["error"] and not any(r in msg["error"] for r in RAW)

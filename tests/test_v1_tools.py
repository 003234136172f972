"""Tools and parameters pass through the OpenAI-compatible door to a provider that supports them
(the OpenAI provider, its upstream mocked with respx), and the model's tool calls come back to
the official SDK — streamed and not — while the turn is stored like any other."""

from __future__ import annotations

import json

import httpx
import openai
import respx

from chatmem.app import create_app
from chatmem.generation.contracts import ToolCallEvent
from chatmem.generation.sse import parse
from chatmem.openai_compat.wire import ChatCompletionChunk

from .conftest import make_settings
from .test_generation import client_for
from .test_providers import oa_chunk, sse_response

BASE = "http://upstream.test/v1"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "the weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL_STREAM = "".join(
    [
        oa_chunk({"role": "assistant", "content": None}),
        oa_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"ci'},
                    }
                ]
            }
        ),
        oa_chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}),
        oa_chunk({}, finish="tool_calls"),
        oa_chunk(
            choices=False, usage={"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27}
        ),
        "data: [DONE]\n\n",
    ]
)
TEXT_STREAM = (
    oa_chunk({"content": "It is sunny in Oslo."}) + oa_chunk({}, "stop") + "data: [DONE]\n\n"
)


def _upstream(request: httpx.Request) -> httpx.Response:
    """The model: calls the tool when offered tools and no result yet, else answers (also the
    background jobs' calls: titles, memory extraction)."""
    body = json.loads(request.content)
    result = any(m["role"] == "tool" for m in body["messages"])
    return sse_response(CALL_STREAM if body.get("tools") and not result else TEXT_STREAM)


def _settings(db_url):
    return make_settings(
        db_url,
        default_model="gpt-test",
        models=[
            {
                "id": "gpt-test",
                "provider": "openai",
                "upstream": "gpt-4o-mini",
                "price_input": 1.0,
                "price_output": 2.0,
                "options": {"base_url": BASE, "api_key": "sk-test", "max_retries": 0},
            }
        ],
    )


async def test_tools_round_trip_through_the_sdk(db_url):
    application = create_app(_settings(db_url))
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(f"{BASE}/chat/completions")
        route.side_effect = _upstream
        async with application.router.lifespan_context(application), client_for(application) as c:
            sdk = openai.AsyncOpenAI(
                base_url="http://test/v1",
                api_key=c.headers["authorization"].split()[1],
                http_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=application)),
                max_retries=0,
            )
            ask = [{"role": "user", "content": "Weather in Oslo?"}]
            got = await sdk.chat.completions.create(
                model="gpt-test", messages=ask, tools=TOOLS, tool_choice="auto", temperature=0.2
            )
            choice = got.choices[0]
            assert choice.finish_reason == "tool_calls" and choice.message.content is None
            [call] = choice.message.tool_calls
            assert (call.id, call.function.name) == ("call_1", "get_weather")
            assert json.loads(call.function.arguments) == {"city": "Oslo"}
            sent = next(
                json.loads(x.request.content)
                for x in route.calls
                if "tools" in json.loads(x.request.content)
            )
            assert sent["tools"] == TOOLS and sent["tool_choice"] == "auto"
            assert sent["temperature"] == 0.2

            # streamed: the call arrives as tool_calls deltas
            stream = await sdk.chat.completions.create(
                model="gpt-test", messages=ask, tools=TOOLS, stream=True
            )
            chunks = [x async for x in stream]
            deltas = [d for x in chunks for d in (x.choices[0].delta.tool_calls or [])]
            assert [(d.id, d.function.name) for d in deltas] == [("call_1", "get_weather")]
            assert chunks[-1].choices[0].finish_reason == "tool_calls"

            # the tool result continues the first conversation
            follow = [
                *ask,
                choice.message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "sunny"}'},
            ]
            raw = await sdk.chat.completions.with_raw_response.create(
                model="gpt-test", messages=follow, tools=TOOLS
            )
            assert raw.parse().choices[0].message.content == "It is sunny in Oslo."
            # upstream got the tool protocol itself, after chatmem's assembled context
            [last] = [
                m
                for m in (json.loads(x.request.content)["messages"] for x in route.calls)
                if any(y["role"] == "tool" for y in m)
            ]
            assert [m["role"] for m in last[-4:]] == ["system", "user", "assistant", "tool"]
            assert last[-3]["content"] == "Weather in Oslo?"
            assert last[-2]["tool_calls"][0]["id"] == "call_1"
            assert last[-1] == {
                "role": "tool",
                "content": '{"sky": "sunny"}',
                "tool_call_id": "call_1",
            }
            cid = raw.headers["x-chatmem-conversation"]
            items = (await c.get(f"/api/conversations/{cid}/messages")).json()["items"]
            assert [m["role"] for m in items] == ["user", "assistant", "user", "assistant"]
            assert items[1]["blocks"][-1]["kind"] == "tool_call"
            # billed like a native turn: the upstream's usage (20 in, 7 out) at the model's prices
            assert items[1]["credits"] > 0 and items[3]["credits"] > 0
            # the native stream of that answer carries the documented tool_call event
            r = await c.get(f"/api/conversations/{cid}/messages/{items[1]['id']}/stream")
            [ev] = [e for e in parse(r.text) if e["type"] == "tool_call"]
            assert ToolCallEvent.model_validate(ev["data"]).name == "get_weather"
            assert '{"sky": "sunny"}' in items[2]["text"]
            await sdk.close()


async def test_a_refused_turn_leaves_nothing_behind(db_url):
    """A request refused after its conversation was made (here: the concurrency cap, 429) deletes
    that conversation again; the resent history then still matches nothing twice."""
    application = create_app(make_settings(db_url, max_concurrent_turns=0))
    async with application.router.lifespan_context(application), client_for(application) as c:
        body = {
            "model": "demo",
            "messages": [
                {"role": "user", "content": "from elsewhere"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "now"},
            ],
        }
        r = await c.post("/v1/chat/completions", json=body)
        assert r.status_code == 429, r.text
        assert (await c.get("/api/conversations")).json()["items"] == []


async def test_stream_frames_are_the_documented_chunks(db_url):
    """Every ``data:`` frame of a /v1 stream is what /openapi.json says: a ChatCompletionChunk
    (deltas, the finish chunk, the usage chunk) until the closing ``[DONE]``."""
    application = create_app(make_settings(db_url))
    async with application.router.lifespan_context(application), client_for(application) as c:
        doc = (await c.get("/openapi.json")).json()
        sse = doc["paths"]["/v1/chat/completions"]["post"]["responses"]["200"]["content"]
        refs = sse["text/event-stream"]["schema"]["properties"]["data"]["contentSchema"]["oneOf"]
        assert [r["$ref"].split("/")[-1] for r in refs] == ["ChatCompletionChunk", "StreamError"]
        assert {"ChatCompletionChunk", "StreamError"} <= set(doc["components"]["schemas"])
        body = {
            "model": "demo",
            "messages": [{"role": "user", "content": "Stream, please"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        r = await c.post("/v1/chat/completions", json=body)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        frames = [x[len("data: ") :] for x in r.text.split("\n\n") if x.startswith("data: ")]
        assert frames[-1] == "[DONE]"
        chunks = [ChatCompletionChunk.model_validate_json(f) for f in frames[:-1]]
        assert chunks[0].choices[0].delta.role == "assistant"
        assert [x.choices[0].finish_reason for x in chunks if x.choices][-1] == "stop"
        assert chunks[-1].choices == [] and chunks[-1].usage and chunks[-1].usage.total_tokens > 0

"""Pure parts of the OpenAI-compatible door: splitting a request, prefix hashes, stop sequences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from chatmem.generation.stops import StopScanner
from chatmem.openai_compat import transcript as tr
from chatmem.openai_compat.wire import ChatCompletionRequest


def test_split_takes_the_input_after_the_last_assistant_message():
    msgs = [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "image_url"}]},
        {"role": "assistant", "content": "Hello"},
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
    ]
    sp = tr.split(msgs)
    assert sp.system == "Be kind.\n\nBe brief."
    assert sp.prefix_end == 2 and sp.new_text == "Weather?"
    assert [m["role"] for m in sp.history] == ["user", "assistant"]
    tool = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    assert tr.split(tool).new_text == "[tool result c1]\n42"
    assert tr.split([{"role": "assistant", "content": "x"}]).new_text == ""


def test_prefix_hash_ignores_how_content_is_spelled_not_what_it_says():
    a = [{"role": "user", "content": "hi"}]
    b = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert tr.prefix_hash(a) == tr.prefix_hash(b)
    assert tr.prefix_hash(a) != tr.prefix_hash([{"role": "user", "content": "hi!"}])
    assert tr.prefix_hash([{"role": "developer", "content": "s"}]) == tr.prefix_hash(
        [{"role": "system", "content": "s"}]
    )


def test_finish_and_usage():
    assert tr.finish_reason("max_tokens") == "length"
    assert tr.finish_reason("end_turn", has_tool_calls=True) == "tool_calls"
    u = tr.usage_of({"input_tokens": 5, "cache_read_tokens": 3, "output_tokens": 2})
    assert u["prompt_tokens"] == 8 and u["total_tokens"] == 10
    assert u["prompt_tokens_details"] == {"cached_tokens": 3}


def _run(stops, pieces):
    s = StopScanner(stops)
    out = "".join(s.feed(p) for p in pieces) + s.flush()
    return out, s.stopped


def test_stop_sequence_across_deltas():
    assert _run(["END"], ["abc E", "N", "D more"]) == ("abc ", True)
    assert _run(["END"], ["abc EN", "d"]) == ("abc ENd", False)
    assert _run([], ["a", "b"]) == ("ab", False)


@given(st.text(max_size=60), st.lists(st.integers(0, 60), max_size=6), st.sampled_from(["zz", "q"]))
def test_stop_scanner_equals_cutting_the_whole_text(text, cuts, stop):
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[i:j] for i, j in zip([0, *points], [*points, len(text)], strict=True)]
    out, stopped = _run([stop], pieces)
    i = text.find(stop)
    assert out == (text[:i] if i >= 0 else text) and stopped == (i >= 0)


def test_tool_round_trip_and_its_replacement_upstream():
    from chatmem.providers.openai import _replace_tool_turn

    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    msgs = [{"role": "user", "content": "q"}, call, result]
    assert tr.tool_round_trip(msgs, 1) == [call, result]
    assert tr.tool_round_trip([*msgs, {"role": "user", "content": "and?"}], 1) == []
    assert tr.tool_round_trip([{"role": "user", "content": "q"}], -1) == []
    wire = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "[tool result c1]\n42"},
    ]
    assert _replace_tool_turn(wire, [call, result]) == [*wire[:2], call, result]


def test_stop_is_bounded_by_its_schema():
    """What the OpenAPI document says ``stop`` takes is what the server takes (schemathesis'
    positive-data check): one sequence or up to 4, each 1–200 characters."""
    schema = ChatCompletionRequest.model_json_schema()["properties"]["stop"]["anyOf"]
    assert schema[0]["minLength"] == 1 and schema[0]["maxLength"] == 200
    assert schema[1]["maxItems"] == 4
    base = {"model": "demo", "messages": [{"role": "user", "content": "hi"}]}
    assert ChatCompletionRequest(**base, stop="x").stop == ["x"]
    assert ChatCompletionRequest(**base, stop=["a", "b"]).stop == ["a", "b"]
    for bad in ("", [""], ["a"] * 5, "y" * 201):
        with pytest.raises(ValidationError):
            ChatCompletionRequest(**base, stop=bad)

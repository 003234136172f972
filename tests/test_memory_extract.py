"""Extractors: every rule pattern (English and Chinese), commands, and the LLM extractor against a
fake provider implementing providers/base.py's interface."""

from __future__ import annotations

import json

import pytest

from chatmem.memory import patterns as pt
from chatmem.memory.extract import (
    ExtractionInput,
    Known,
    LLMExtractor,
    RuleExtractor,
    SourceMessage,
    build_prompt,
    forget_matches,
    match_sentence,
    parse_command,
    rule_candidates,
    sentences,
)
from chatmem.memory.policy import Mem
from chatmem.providers.base import Finish, ModelInfo, TextDelta, Usage


def test_at_least_thirty_patterns_per_language_with_unique_names():
    assert len(pt.EN) >= 30 and len(pt.ZH) >= 30
    names = [p.name for p in pt.ALL]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("p", pt.ALL, ids=[p.name for p in pt.ALL])
def test_each_pattern_fires_on_its_example(p):
    hits = [h for s in sentences(p.example) for h in match_sentence(s)]
    assert hits, f"{p.name}: nothing matched {p.example!r}"
    first, groups = hits[0]
    assert first.name == p.name, f"{p.example!r} matched {first.name} first"
    assert groups["v"] == p.expect
    [c] = [
        c
        for c in rule_candidates(SourceMessage("m1", "user", p.example, 1000))
        if c.value == p.expect
    ][:1]
    assert c.memory_type == p.memory_type and c.source_message_ids == ("m1",)
    assert c.status == ("QUERY_DEPENDENT" if p.ttl_ms else "ACTIVE")


def test_alice_sentence_yields_name_and_location():
    got = rule_candidates(SourceMessage("m1", "user", "My name is Alice and I live in Paris.", 5))
    assert {(c.slot, c.value) for c in got} == {("name", "Alice"), ("home_location", "Paris")}
    moved = rule_candidates(SourceMessage("m2", "user", "I moved to Berlin.", 9))
    assert [(c.slot, c.value, c.memory_text) for c in moved] == [
        ("home_location", "Berlin", "Lives in Berlin")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What's my name?",
        "Where do I live?",
        "My sister lives in Rome.",
        "My friend's name is Bob.",
        "I like that idea.",
        "我叫什么名字？",
        "你住在哪里？",
        "Do you think I should move to Oslo?",
        "我妹妹住在北京。",
        "Hello there!",
    ],
)
def test_questions_and_third_party_facts_are_not_user_facts(text):
    assert rule_candidates(SourceMessage("m1", "user", text, 1)) == []


def test_assistant_text_never_becomes_a_user_fact():
    assert (
        rule_candidates(SourceMessage("m1", "assistant", "My name is Claude. I live in a server."))
        == []
    )


def test_agent_conversations_use_seed000_types():
    got = rule_candidates(
        SourceMessage("m1", "user", "以后回复我尽量直接一点。我讨厌香菜。", 1), agent=True
    )
    types = {c.memory_type for c in got}
    assert types <= {"偏好", "边界", "关系目标", "对话风格", "重要事实"} and "对话风格" in types


async def test_rule_extractor_applies_the_cap_keeping_important_facts():
    text = (
        "My name is Alice. I live in Paris. I love hiking. I hate cilantro. "
        "I'm allergic to peanuts. I work at Acme. I speak fluent Japanese."
    )
    res = await RuleExtractor().extract(
        ExtractionInput([SourceMessage("m1", "user", text, 1)], cap=2)
    )
    assert len(res.candidates) == 2 and all(c.importance >= 4 for c in res.candidates)
    assert any(c.memory_type == "constraint" for c in res.candidates)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Remember that I live in Oslo.", ("remember", "I live in Oslo")),
        ("please remember: my locker code is 42", ("remember", "my locker code is 42")),
        ("Don't forget that I'm vegan", ("remember", "I'm vegan")),
        ("记住我不吃香菜", ("remember", "我不吃香菜")),
        ("请记住：我的生日是5月3日", ("remember", "我的生日是5月3日")),
        ("Forget where I live.", ("forget", "where I live")),
        ("please forget that I live in Berlin", ("forget", "I live in Berlin")),
        ("忘记我住在哪", ("forget", "我住在哪")),
        ("I remember the old days", None),
        ("我忘了带钥匙", None),
    ],
)
def test_parse_command(text, expected):
    assert parse_command(text) == expected


def test_remember_extracts_the_stated_fact_and_forget_yields_nothing():
    [c] = rule_candidates(
        SourceMessage("m1", "user", "Remember that I live in Oslo", 1), origin="user"
    )
    assert (c.slot, c.value, c.origin) == ("home_location", "Oslo", "user")
    assert rule_candidates(SourceMessage("m2", "user", "Forget that I live in Oslo", 2)) == []


def _mem(i, text, slot="", value="", status="ACTIVE"):
    return Mem(id=f"mem_{i}", memory_text=text, slot=slot, value=value, status=status)


def test_forget_matches_by_fact_slot_words_and_text():
    rows = [
        _mem(1, "Lives in Berlin", "home_location", "Berlin"),
        _mem(2, "Lives in Paris", "home_location", "Paris", "STALE"),
        _mem(3, "User's name is Alice", "name", "Alice"),
        _mem(4, "Likes jazz"),
        _mem(5, "用户住在北京", "home_location", "北京"),
        _mem(6, "用户喜欢爬山"),
    ]
    assert forget_matches("that I live in Berlin", rows) == ["mem_1"]
    assert forget_matches("where I live", rows) == ["mem_1", "mem_5"]
    assert forget_matches("jazz", rows) == ["mem_4"]
    assert forget_matches("我喜欢爬山", rows) == ["mem_6"]
    assert forget_matches("my name", rows) == ["mem_3"]
    assert forget_matches("the weather", rows) == []


# ── the LLM extractor ───────────────────────────────────────────────────────────────────────────


class FakeProvider:
    """A Provider (providers/base.py) that answers with a canned text and records the prompt."""

    name = "fake"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls: list = []

    async def stream(self, model, messages, *, max_tokens):
        self.calls.append(messages)
        for i in range(0, len(self.answer), 7):
            yield TextDelta(self.answer[i : i + 7])
        yield Usage(input_tokens=10, output_tokens=5)
        yield Finish()


MODEL = ModelInfo(id="fake-1", provider="fake")
MSGS = [
    SourceMessage("msg_aaa", "user", "I moved to Berlin last week.", 1_000),
    SourceMessage("msg_bbb", "assistant", "Nice! Berlin is great. My name is Bot.", 2_000),
]
KNOWN = [
    Known("Lives in Paris", "home_location", "Paris", "location"),
    Known("Likes jazz", "", "", "preference"),
]


def _answer(items) -> str:
    return json.dumps({"memories": items})


async def test_llm_extractor_reads_structured_json_and_maps_ids():
    p = FakeProvider(
        "```json\n"
        + _answer(
            [
                {
                    "memory_text": "Lives in Berlin",
                    "memory_type": "location",
                    "slot": "",
                    "value": "Berlin",
                    "importance": 4,
                    "confidence": 0.9,
                    "status": "ACTIVE",
                    "valid_from": "2024-05-01",
                    "valid_until": None,
                    "source": "m1",
                    "same_as": 1,
                }
            ]
        )
        + "\n```"
    )
    res = await LLMExtractor(p, MODEL).extract(ExtractionInput(MSGS, KNOWN, cap=5, now=3_000))
    [c] = res.candidates
    assert c.slot == "home_location"  # adopted from existing memory [1]
    assert c.source_message_ids == ("msg_aaa",) and c.value == "Berlin" and c.importance == 4
    assert c.valid_from == 1714521600000 and c.status == "ACTIVE" and res.rejected == []
    prompt = "\n".join(m.content for m in p.calls[0])
    assert "[1] Lives in Paris" in prompt and "[2] Likes jazz" in prompt
    assert "m1 user [1970-01-01 Thu]: I moved to Berlin" in prompt and "msg_aaa" not in prompt


async def test_llm_extractor_validates_every_returned_id():
    items = [
        {"memory_text": "Name is Bot", "memory_type": "identity", "source": "m2"},  # assistant
        {"memory_text": "Lives in Rome", "memory_type": "location", "source": "m7"},  # no such msg
        {"memory_text": "Likes blues", "memory_type": "preference", "source": "m1", "same_as": 9},
        {"memory_text": "Likes blues", "memory_type": "preference", "source": "m1", "same_as": "x"},
        {"memory_text": "", "source": "m1"},
        {
            "memory_text": "In Tokyo",
            "memory_type": "nonsense",
            "source": 1,
            "slot": "Current Location!",
            "valid_until": "2030-01-01",
            "importance": 99,
            "confidence": "high",
        },
    ]
    res = await LLMExtractor(FakeProvider(_answer(items)), MODEL).extract(
        ExtractionInput(MSGS, KNOWN, cap=5, now=3_000)
    )
    reasons = [r["reason"] for r in res.rejected]
    assert reasons == [
        "source is not a user message",
        "unknown source message",
        "unknown existing memory id",
        "unknown existing memory id",
        "empty memory_text",
    ]
    [c] = res.candidates
    assert (c.memory_type, c.slot, c.status, c.importance, c.confidence) == (
        "",
        "current_location",
        "QUERY_DEPENDENT",
        5,
        0.7,
    )


async def test_llm_extractor_agent_types_cap_and_garbage():
    items = [{"memory_text": f"fact {i}", "memory_type": "偏好", "source": "m1"} for i in range(5)]
    res = await LLMExtractor(FakeProvider(_answer(items)), MODEL).extract(
        ExtractionInput(MSGS, [], agent=True, agent_name="Mira", cap=2)
    )
    assert len(res.candidates) == 2 and {c.memory_type for c in res.candidates} == {"偏好"}
    bad = await LLMExtractor(FakeProvider("I think the user lives in Berlin."), MODEL).extract(
        ExtractionInput(MSGS, KNOWN)
    )
    assert bad.candidates == [] and bad.rejected
    prompt = build_prompt(ExtractionInput(MSGS, [], agent=True, agent_name="Mira", cap=2))
    assert (
        "偏好 | 边界 | 关系目标 | 对话风格 | 重要事实" in prompt[0].content
        and "Agent: Mira" in prompt[1].content
    )


async def test_llm_extractor_skips_the_call_without_user_text():
    p = FakeProvider(_answer([]))
    res = await LLMExtractor(p, MODEL).extract(ExtractionInput([MSGS[1]]))
    assert res.candidates == [] and p.calls == []


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("My favourite colour is green.", "favorite_color"),
        ("My favorite color is blue.", "favorite_color"),
        ("My wife's name is Anna.", "wife_name"),
        ("我女儿叫朵朵。", "daughter_name"),
        ("我老婆叫小红。", "wife_name"),
        ("我最喜欢的水果是芒果。", "favorite_水果"),
    ],
)
def test_slots_are_stable_keys(text, slot):
    [c] = rule_candidates(SourceMessage("m1", "user", text, 1))
    assert c.slot == slot

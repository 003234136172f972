"""The rule extractor against a labelled set of 300+ English and Chinese sentences.

``tests/data/extractor_cases.jsonl`` holds one sentence a line with the memories it must yield
(``expect``; empty = none): plain facts, instructions to the assistant, encouragement, questions,
hypotheticals, other people, negations, "remember that X and Y", relative times (resolved against
the message's ``at``) and captures that used to come out garbled. A memory counts as found when
its text (normalised), type and — where the case gives them — validity and status match. The test
prints precision and recall per category and asserts precision ≥ 0.9 in every category and overall
(storing noise is worse than missing a fact: a wrong constraint is injected into every prompt) and
a recall floor so a broken extractor cannot pass by extracting nothing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chatmem.memory.extract import SourceMessage, rule_candidates
from chatmem.memory.policy import normalize_text

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "extractor_cases.jsonl").read_text().splitlines()
    if line.strip()
]
DEFAULT_AT = 1_718_445_600_000  # 2024-06-15T10:00:00Z
MIN_PRECISION = 0.9
MIN_RECALL = 0.85


def _ms(v: str) -> int:
    d = datetime.fromisoformat(v.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return int(d.timestamp() * 1000)


def _at(case) -> int:
    return _ms(case["at"]) if case.get("at") else DEFAULT_AT


def _matches(cand, exp: dict) -> bool:
    if normalize_text(cand.memory_text) != normalize_text(exp["memory_text"]):
        return False
    if exp.get("memory_type") and cand.memory_type != exp["memory_type"]:
        return False
    for key in ("valid_from", "valid_until"):
        if key in exp and getattr(cand, key) != _ms(exp[key]):
            return False
    return "status" not in exp or cand.status == exp["status"]


def _run(case) -> tuple[list, list, list]:
    """(true positives, false positives, missed) for one case."""
    got = rule_candidates(SourceMessage("m1", "user", case["text"], _at(case)))
    missed = list(case["expect"])
    tp, fp = [], []
    for cand in got:
        hit = next((e for e in missed if _matches(cand, e)), None)
        if hit is None:
            fp.append(cand)
        else:
            missed.remove(hit)
            tp.append(cand)
    return tp, fp, missed


def _score(cases):
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # tp, fp, fn
    failures = []
    for case in cases:
        tp, fp, missed = _run(case)
        for key in (case["category"], f"{case['lang']}:*", "ALL"):
            by[key][0] += len(tp)
            by[key][1] += len(fp)
            by[key][2] += len(missed)
        if fp or missed:
            failures.append((case["text"], [c.memory_text for c in fp], missed))
    return by, failures


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def test_the_case_set_is_large_and_covers_every_category():
    assert len(CASES) >= 300
    langs = {c["lang"] for c in CASES}
    cats = {c["category"] for c in CASES}
    assert langs == {"en", "zh"}
    assert {
        "fact",
        "constraint",
        "encouragement",
        "question",
        "hypothetical",
        "third_person",
        "negation",
        "remember_and",
        "relative_time",
        "garbled",
    } <= cats
    for cat in cats:
        assert {c["lang"] for c in CASES if c["category"] == cat} == langs or cat == "garbled"
    texts = [c["text"] for c in CASES]
    assert len(texts) == len(set(texts)), "duplicate sentences"


def test_precision_and_recall_per_category():
    by, failures = _score(CASES)
    print("\ncategory            precision  recall   tp  fp  fn")
    for key in sorted(by):
        tp, fp, fn = by[key]
        print(
            f"{key:<18} {_ratio(tp, tp + fp):>9.3f} {_ratio(tp, tp + fn):>7.3f} {tp:>4} {fp:>3} {fn:>3}"
        )
    for text, fp, missed in failures:
        print(f"  {text!r}: extra={fp} missed={[m['memory_text'] for m in missed]}")
    for key, (tp, fp, _) in by.items():
        assert _ratio(tp, tp + fp) >= MIN_PRECISION, f"precision of {key}"
    tp, fp, fn = by["ALL"]
    assert _ratio(tp, tp + fn) >= MIN_RECALL, "recall"


@pytest.mark.parametrize(
    "text",
    [
        "Don't give up on your dreams.",
        "Loves makes writing even more fun.",
        "Music I love makes writing even more fun.",
        "不要放弃你的梦想。",
    ],
)
def test_named_regressions_store_nothing(text):
    assert rule_candidates(SourceMessage("m1", "user", text, DEFAULT_AT)) == []


def test_remember_that_x_and_y_keeps_both_halves():
    got = rule_candidates(
        SourceMessage(
            "m1", "user", "Remember that I am vegetarian and allergic to peanuts", DEFAULT_AT
        )
    )
    assert {c.memory_text for c in got} == {"Is vegetarian", "Is allergic to peanuts"}


def test_relative_times_follow_the_message_time_not_the_clock():
    march, june = _ms("2024-03-15T10:00:00Z"), _ms("2024-06-15T10:00:00Z")
    for at, start in ((march, "2024-02-01"), (june, "2024-05-01")):
        [c] = rule_candidates(SourceMessage("m1", "user", "I moved to Munich last month.", at))
        assert (c.memory_text, c.valid_from, c.valid_until) == ("Lives in Munich", _ms(start), None)

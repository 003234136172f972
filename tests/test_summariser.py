"""The summarisers keep what a later question needs (pure, no database): both sides of the
dialogue in proportion to what each said, names and numbers over small talk, the date of each
day; merges re-select whole lines instead of blurring them, so a fact survives every merge
verbatim with its date; the model summariser is sent both speakers and the dates. And the
compaction policy is token-driven: a larger window keeps more verbatim, whatever the number of
messages."""

from __future__ import annotations

import re

from chatmem.context import compaction as cp
from chatmem.context import extractive as ex
from chatmem.context import summary as sm
from chatmem.context.tokens import counter_for
from chatmem.providers.base import TextDelta

from .conftest import make_settings
from .ctx_helpers import demo_model

C = counter_for("cl100k_base")
DAY = 86_400_000
T0 = 1_710_374_400_000  # 2024-03-14T00:00:00Z
NAMES = "Lena Omar Priya Tomas Aiko Femi Ines Ravi Sven Mira".split()
CITIES = "Porto Lisbon Oslo Kyoto Lima Accra Hanoi Quito Tunis Riga".split()
_DATE = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] ")


def _dated(summary: str) -> list[tuple[str, str]]:
    """(day, line without its date) for every line, the date carried forward."""
    out, day = [], ""
    for line in summary.splitlines():
        m = _DATE.match(line)
        if m:
            day, line = m.group(1), line[m.end() :]
        out.append((day, line))
    return out


def _dialogue() -> list[tuple[str, str, int]]:
    """40 rounds over 5 days: every user line a fact, every other answer a fact too, the rest
    the same small talk."""
    items = []
    for i in range(40):
        at = T0 + (i // 8) * DAY + 2 * i
        fact = f"My friend {NAMES[i % 10]} visited {CITIES[(i * 7) % 10]} in {1990 + i}."
        items.append(("user", fact, at))
        answer = (
            f"Noted: the {CITIES[(i * 3) % 10]} museum opens at {i % 12 + 1} on pier {i + 40}."
            if i % 2 == 0
            else "Sounds good!"
        )
        items.append(("assistant", answer, at + 1))
    return items


def test_summary_keeps_both_speakers_in_proportion_with_their_dates():
    items = _dialogue()
    for budget in (200, 300, 500):
        out = ex.summarize_messages(items, budget, C.count)
        assert 0 < C.count(out) <= budget
        lines = _dated(out)
        users = sum(line.startswith("- User:") for _, line in lines)
        answers = sum(line.startswith("- Assistant:") for _, line in lines)
        # the user said twice as many informative things: about twice as many lines, both kept
        assert answers >= 2 and abs(users - 2 * answers) <= 2, out
        assert "Sounds good" not in out  # small talk said 20 times carries nothing
        said = {(ex.day_of(at), f"- {ex.SPEAKERS[r]}: {text}") for r, text, at in items}
        assert set(lines) <= said, out  # every line verbatim, under the day it was said
        assert sum(1 for line in out.splitlines() if _DATE.match(line)) == len(
            {d for d, _ in lines}
        )  # one date per day, on its first line


def test_names_and_numbers_outrank_small_talk_from_either_side():
    items = [("user", f"Haha, that is so true, round {i}!", T0 + i) for i in range(10)]
    items += [
        ("user", "My sister Lena moved to Porto and teaches violin.", T0 + 20),
        ("assistant", "Your flight to Lisbon leaves Friday at 07:40 from gate 12.", T0 + 21),
    ]
    items += [("assistant", "I see, tell me more about it.", T0 + 30 + i) for i in range(10)]
    out = ex.summarize_messages(items, 60, C.count)
    assert "Lena moved to Porto" in out and "Lisbon leaves Friday at 07:40" in out, out
    assert "Haha" not in out and "tell me more" not in out


def test_repeated_merges_keep_each_fact_verbatim_with_its_date():
    """Ten ranges summarised one by one and folded into the running summary nine times (the
    way compaction merges blocks): every fact line comes out exactly as first written, under its
    own date, and the small talk is what went."""
    summaries, facts = [], {}
    for k in range(10):
        at = T0 + k * DAY
        fact = f"{NAMES[k]} booked table {k + 11} at the {CITIES[k]} bistro for March {k + 3}."
        items = [("user", fact, at)]
        items += [
            ("assistant" if j % 2 else "user", "Okay, sounds nice.", at + j) for j in range(1, 9)
        ]
        s = ex.summarize_messages(items, 400, C.count)
        assert fact in s
        facts[f"- User: {fact}"] = ex.day_of(at)
        summaries.append(s)
    merged = summaries[0]
    for s in summaries[1:]:
        merged = ex.merge_summaries([merged, s], 300, C.count)
        assert C.count(merged) <= 300
    lines = _dated(merged)
    assert {line: day for day, line in lines} == facts, merged
    assert ex.merge_summaries([merged], 300, C.count) == merged  # a merge that fits is a no-op


class _Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.sent: list = []

    async def stream(self, model, messages, *, max_tokens):
        self.sent.append(messages)
        yield TextDelta("a summary")


async def test_the_model_summariser_is_sent_both_speakers_and_the_dates():
    p = _Recorder()
    s = cp.ModelSummarizer(p, demo_model(), C)
    items = [
        ("user", "I moved to Porto.", T0),
        ("assistant", "Porto is lovely in spring.", T0 + 1),
        ("user", "Lena visits next week.", T0 + DAY),
    ]
    assert await s.summarize(items, 100) == "a summary"
    [(system, body)] = p.sent
    assert "BOTH speakers" in system.content and "dates" in system.content
    assert body.content == (
        "[2024-03-14] User: I moved to Porto.\n\n"
        "Assistant: Porto is lovely in spring.\n\n"
        "[2024-03-15] User: Lena visits next week."
    )
    await s.merge(["first", "second"], 50)
    assert "date" in p.sent[-1][0].content and "first" in p.sent[-1][1].content


def test_the_window_not_the_message_count_decides_compaction():
    """A 128k model keeps far more verbatim than an 8k one; a thousand short messages that fit
    do not trigger compaction, the same thousand over a small window do."""
    settings = make_settings("sqlite://")
    small = cp.policy_for(settings, demo_model(8192, 1024))
    big = cp.policy_for(settings, demo_model(131_072, 4096))
    assert big.retain_tokens > 15 * small.retain_tokens
    assert big.trigger_tokens > 15 * small.trigger_tokens
    backlog = [
        sm.TailMsg(f"m{i}", "user" if i % 2 == 0 else "assistant", "complete", 10)
        for i in range(1000)
    ]  # 10,000 tokens
    assert not sm.decide(backlog, big.thresholds(), estimated_tokens=10_000).needed
    d = sm.decide(backlog, small.thresholds(), estimated_tokens=10_000)
    assert d.needed and d.reason == "tokens"
    kept = sum(m.tokens for m in backlog[d.cut :])
    assert kept <= small.retain_tokens and 1000 - d.cut > 2 * small.keep_rounds

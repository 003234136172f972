"""Relative time phrases resolved against a message's time: calendar edges (year ends, weeks from
Monday, Sundays), Chinese numerals, and a property over random times (pure, no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmem.memory import when


def ms(s: str) -> int:
    d = datetime.fromisoformat(s)
    return int((d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp() * 1000)


def day(v: int) -> str:
    return datetime.fromtimestamp(v / 1000, tz=UTC).strftime("%Y-%m-%d")


@pytest.mark.parametrize(
    ("at", "phrase", "start", "end"),
    [
        ("2024-01-10T08:00", "last month", "2023-12-01", "2024-01-01"),
        ("2024-12-31T23:00", "next month", "2025-01-01", "2025-02-01"),
        ("2024-12-31T23:00", "tomorrow", "2025-01-01", "2025-01-02"),
        ("2024-03-17T12:00", "this week", "2024-03-11", "2024-03-18"),  # a Sunday
        ("2024-03-18T00:30", "last week", "2024-03-11", "2024-03-18"),  # a Monday
        ("2024-03-17T12:00", "this weekend", "2024-03-16", "2024-03-18"),
        ("2024-03-15T10:00", "next weekend", "2024-03-23", "2024-03-25"),
        ("2024-03-15T10:00", "on Monday", "2024-03-18", "2024-03-19"),
        ("2024-03-15T10:00", "friday", "2024-03-15", "2024-03-16"),
        ("2024-03-15T10:00", "last Friday", "2024-03-08", "2024-03-09"),
        ("2024-03-31T10:00", "a month ago", "2024-02-28", "2024-02-29"),
        ("2024-03-15T10:00", "last year", "2023-01-01", "2024-01-01"),
        ("2024-03-15T10:00", "上个月", "2024-02-01", "2024-03-01"),
        ("2024-01-15T10:00", "上个月", "2023-12-01", "2024-01-01"),
        ("2024-03-15T10:00", "下周三", "2024-03-20", "2024-03-21"),
        ("2024-03-15T10:00", "十二天前", "2024-03-03", "2024-03-04"),
        ("2024-03-15T10:00", "两周后", "2024-03-29", "2024-03-30"),
        ("2024-03-15T10:00", "前年", "2022-01-01", "2023-01-01"),
        ("2024-03-15T10:00", "这个周末", "2024-03-16", "2024-03-18"),
    ],
)
def test_calendar_periods(at, phrase, start, end):
    span = when.resolve(phrase, ms(at))
    assert span is not None and (day(span.start), day(span.end)) == (start, end)


def test_durations_run_from_the_message_time():
    at = ms("2024-03-15T10:00")
    span = when.resolve("for two weeks", at)
    assert (span.start, span.end) == (at, ms("2024-03-29T10:00"))
    assert when.resolve("for the next 3 days", at).end == ms("2024-03-18T10:00")


def test_unknown_phrases_and_finding_phrases_in_text():
    assert when.resolve("someday", 0) is None and when.first("no time here", 0) is None
    assert [p for _, _, p in when.find("I moved last month and 明天去北京")] == [
        "last month",
        "明天",
    ]


PHRASES = [
    "today", "tomorrow", "yesterday", "this week", "next week", "last week", "this weekend",
    "this month", "next month", "last month", "this year", "next year", "last year",
    "in 3 days", "2 weeks ago", "for a few days", "next monday", "last sunday",
    "今天", "明天", "后天", "昨天", "本周", "下周", "上周", "下个月", "上个月", "去年", "明年",
    "三天后", "两个月前", "周日", "这几天",
]  # fmt: skip


@given(at=st.integers(min_value=0, max_value=ms("2200-01-01")), phrase=st.sampled_from(PHRASES))
def test_every_phrase_names_a_non_empty_period_near_the_message(at, phrase):
    span = when.resolve(phrase, at)
    assert span is not None and span.start < span.end
    assert abs(span.start - at) <= 2 * 366 * when.DAY_MS

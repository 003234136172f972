"""Relative time phrases ("last month", "next week", 上个月, 明天 …) resolved against a message's time.

Why it exists: a memory's ``valid_from``/``valid_until`` must say when a fact held, and users say
when relatively — "I moved to Munich last month" written on 2024-03-15 means "lives in Munich
since 2024-02-01", whatever day the message is processed (imported history keeps its own
``created_at``). Each phrase names a calendar period; :func:`resolve` turns it into a half-open
interval ``[start, end)`` of epoch milliseconds. Pure: no framework, no database, no clock.

Calendar rules (UTC — chatmem keeps no per-user time zone): weeks start on Monday (ISO 8601); "this
weekend" is Saturday 00:00 to Monday 00:00 of the current week; "in 3 days", "3 days ago" name that
day; "for 2 weeks" runs from the message's time. General-purpose date parsers answer a point in
time, not a period, and cover Chinese relative phrases only in part; the phrase set here is small,
closed and tested, so it is written out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DAY_MS = 86_400_000

_NUM_EN = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}
_NUM_ZH = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_N_EN = r"(?:\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_UNIT_EN = r"(?:days?|weeks?|months?|years?)"
_N_ZH = r"(?:\d{1,3}|[一两二三四五六七八九十]{1,3})"

#: English phrases, longest alternatives first (also used by patterns.py to end a value).
EN = (
    r"(?:the day after tomorrow|the day before yesterday|tomorrow(?: morning| evening| night)?|"
    r"yesterday|today|tonight|this morning|this evening|"
    r"(?:this|next|last|the coming|the past) (?:week(?:end)?|month|year)|"
    rf"in {_N_EN} {_UNIT_EN}|{_N_EN} {_UNIT_EN} ago|for (?:the next )?{_N_EN} {_UNIT_EN}|"
    rf"(?:on |this |next |last )?(?:{'|'.join(_WEEKDAYS)}))"
)
#: Chinese phrases.
ZH = (
    r"(?:大后天|后天|明天|明早|明晚|今天|今晚|今早|昨天|昨晚|前天|"
    r"(?:这|本|下|上)(?:个)?(?:周末|星期|礼拜|周)|(?:这|本|下|上)(?:个)?月|今年|明年|去年|前年|"
    rf"{_N_ZH}(?:个)?(?:天|周|星期|礼拜|月|年)(?:以?后|之后|以?前|之前)|这几天|"
    r"(?:这|本|下|上)?(?:周|星期|礼拜)[一二三四五六日天])"
)
_EN_RX = re.compile(rf"\b{EN}\b", re.I)
_ZH_RX = re.compile(ZH)


@dataclass(frozen=True)
class Span:
    """A half-open interval ``[start, end)`` in epoch milliseconds, and the phrase it came from."""

    start: int
    end: int
    phrase: str

    def past(self, at: int) -> bool:
        return self.end <= at

    def future(self, at: int) -> bool:
        return self.start > at


def find(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, phrase)`` of every time phrase in ``text``, in order."""
    hits = [(m.start(), m.end(), m.group(0)) for m in _EN_RX.finditer(text or "")]
    hits += [(m.start(), m.end(), m.group(0)) for m in _ZH_RX.finditer(text or "")]
    return sorted(hits)


def first(text: str, at: int) -> Span | None:
    """The first phrase in ``text`` that resolves, resolved against ``at``."""
    for _, _, phrase in find(text):
        span = resolve(phrase, at)
        if span is not None:
            return span
    return None


def _ms(d: datetime) -> int:
    return int(d.timestamp() * 1000)


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(d: datetime, shift: int = 0) -> datetime:
    idx = d.year * 12 + (d.month - 1) + shift
    return datetime(idx // 12, idx % 12 + 1, 1, tzinfo=UTC)


def _year(d: datetime, shift: int = 0) -> datetime:
    return datetime(d.year + shift, 1, 1, tzinfo=UTC)


def _number(word: str) -> int | None:
    w = word.strip().lower()
    if w.isdigit():
        return int(w)
    if w in _NUM_EN:
        return _NUM_EN[w]
    if re.fullmatch(r"[一两二三四五六七八九十]{1,3}", w):
        if w == "十":
            return 10
        if w.startswith("十"):
            return 10 + _NUM_ZH.get(w[1:], 0)
        if "十" in w:
            tens, _, ones = w.partition("十")
            return _NUM_ZH.get(tens, 1) * 10 + (_NUM_ZH.get(ones, 0) if ones else 0)
        return _NUM_ZH.get(w)
    return None


def _shift(d: datetime, n: int, unit: str) -> datetime:
    if unit.startswith(("day", "天")):
        return d + timedelta(days=n)
    if unit.startswith(("week", "周", "星期", "礼拜")):
        return d + timedelta(weeks=n)
    if unit.startswith(("month", "月")):
        m = _month(d, n)
        return m.replace(day=min(d.day, 28))
    return d.replace(year=d.year + n, day=min(d.day, 28))


def _span(a: datetime, b: datetime, phrase: str) -> Span:
    return Span(_ms(a), _ms(b), phrase)


def resolve(phrase: str, at: int) -> Span | None:
    """The period ``phrase`` names, seen from a message written at ``at`` (epoch ms), or None."""
    p = re.sub(r"\s+", " ", (phrase or "").strip().lower())
    now = datetime.fromtimestamp(at / 1000, tz=UTC)
    for form in (_fixed, _relative_period, _counted, _weekday):
        span = form(p, now, phrase)
        if span is not None:
            return span
    return None


def _fixed(p: str, now: datetime, phrase: str) -> Span | None:
    """A fixed phrase: today, tomorrow evening, 后天, 去年 …"""
    day = _day(now)

    def days(offset: int, n: int = 1) -> Span:
        start = day + timedelta(days=offset)
        return _span(start, start + timedelta(days=n), phrase)

    fixed = {
        "today": lambda: days(0),
        "tonight": lambda: days(0),
        "this morning": lambda: days(0),
        "this evening": lambda: days(0),
        "今天": lambda: days(0),
        "今晚": lambda: days(0),
        "今早": lambda: days(0),
        "tomorrow": lambda: days(1),
        "tomorrow morning": lambda: days(1),
        "tomorrow evening": lambda: days(1),
        "tomorrow night": lambda: days(1),
        "明天": lambda: days(1),
        "明早": lambda: days(1),
        "明晚": lambda: days(1),
        "the day after tomorrow": lambda: days(2),
        "后天": lambda: days(2),
        "大后天": lambda: days(3),
        "yesterday": lambda: days(-1),
        "昨天": lambda: days(-1),
        "昨晚": lambda: days(-1),
        "the day before yesterday": lambda: days(-2),
        "前天": lambda: days(-2),
        "这几天": lambda: _span(now, day + timedelta(days=5), phrase),
        "今年": lambda: _span(_year(now), _year(now, 1), phrase),
        "明年": lambda: _span(_year(now, 1), _year(now, 2), phrase),
        "去年": lambda: _span(_year(now, -1), _year(now), phrase),
        "前年": lambda: _span(_year(now, -2), _year(now, -1), phrase),
    }
    return fixed[p]() if p in fixed else None


def _relative_period(p: str, now: datetime, phrase: str) -> Span | None:
    """This/next/last week, weekend, month or year (这周, 下个月 …)."""
    day = _day(now)
    week = day - timedelta(days=day.weekday())
    rel = {"this": 0, "the coming": 1, "next": 1, "last": -1, "the past": -1}
    rel_zh = {"这": 0, "本": 0, "下": 1, "上": -1}
    m = re.fullmatch(r"(this|next|last|the coming|the past) (week|weekend|month|year)", p)
    zm = re.fullmatch(r"(这|本|下|上)个?(周末|星期|礼拜|周|月)", p)
    if m or zm:
        if m:
            shift, unit = rel[m.group(1)], m.group(2)
        else:
            assert zm is not None  # one of the two matched
            shift = rel_zh[zm.group(1)]
            unit = {"周末": "weekend", "月": "month"}.get(zm.group(2), "week")
        if unit == "week":
            start = week + timedelta(weeks=shift)
            return _span(start, start + timedelta(weeks=1), phrase)
        if unit == "weekend":
            start = week + timedelta(weeks=shift, days=5)
            return _span(start, start + timedelta(days=2), phrase)
        if unit == "month":
            return _span(_month(now, shift), _month(now, shift + 1), phrase)
        return _span(_year(now, shift), _year(now, shift + 1), phrase)
    return None


def _counted(p: str, now: datetime, phrase: str) -> Span | None:
    """A counted offset: in 3 days, two weeks ago, for the next 5 days, 三天后 …"""
    m = re.fullmatch(rf"in ({_N_EN}) ({_UNIT_EN})", p)
    if m:
        target = _day(_shift(now, _number(m.group(1)) or 1, m.group(2)))
        return _span(target, target + timedelta(days=1), phrase)
    m = re.fullmatch(rf"({_N_EN}) ({_UNIT_EN}) ago", p)
    if m:
        target = _day(_shift(now, -(_number(m.group(1)) or 1), m.group(2)))
        return _span(target, target + timedelta(days=1), phrase)
    m = re.fullmatch(rf"for (?:the next )?({_N_EN}) ({_UNIT_EN})", p)
    if m:
        return _span(now, _shift(now, _number(m.group(1)) or 1, m.group(2)), phrase)
    zm = re.fullmatch(rf"({_N_ZH})个?(天|周|星期|礼拜|月|年)(以?后|之后|以?前|之前)", p)
    if zm:
        n = _number(zm.group(1)) or 1
        sign = -1 if "前" in zm.group(3) else 1
        target = _day(_shift(now, sign * n, zm.group(2)))
        return _span(target, target + timedelta(days=1), phrase)
    return None


def _weekday(p: str, now: datetime, phrase: str) -> Span | None:
    """A weekday, alone or with this/next/last (on friday, next monday, 下周三 …)."""
    day = _day(now)
    week = day - timedelta(days=day.weekday())
    m = re.fullmatch(rf"(?:(on|this|next|last) )?({'|'.join(_WEEKDAYS)})", p)
    zm = re.fullmatch(r"(这|本|下|上)?(?:周|星期|礼拜)([一二三四五六日天])", p)
    if m or zm:
        if m:
            which, wd = m.group(1) or "on", _WEEKDAYS.index(m.group(2))
        else:
            assert zm is not None  # one of the two matched
            which, wd = (
                {"下": "next", "上": "last"}.get(zm.group(1) or "", "this"),
                _ZH_WEEKDAYS[zm.group(2)],
            )
        if which == "next":
            start = week + timedelta(weeks=1, days=wd)
        elif which == "last":
            start = week + timedelta(weeks=-1, days=wd)
        elif which == "this":
            start = week + timedelta(days=wd)
        else:  # "on friday": the next such day (today counts)
            start = day + timedelta(days=(wd - day.weekday()) % 7)
        return _span(start, start + timedelta(days=1), phrase)
    return None

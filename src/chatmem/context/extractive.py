"""An extractive summariser: the demo provider's stand-in for a model-written summary (pure).

The offline default must compact too, or a demo conversation would silently lose its beginning.
Instead of asking a model, this picks sentences, the classic way: a sentence is worth what its
words say that the rest of the range does not — the sum of each distinct word's rarity (inverse
document frequency over the range's sentences), plus names, places and numbers — so "I'm allergic
to kiwi" outranks "Sounds good!" and a phrase someone repeats in every message ("anyway, we'll
see") counts for nothing. Each message becomes one line — its best sentence or two, prefixed with
the speaker — and when that is over the token target the best lines are kept **from both sides of
the dialogue**, in proportion to how much each side said, in their original order. The first line
of each day carries its date (``[2025-03-14]``), so "last month" stays answerable. Merging
summaries re-selects among their lines the same way, keeping each line's date, so a fact survives
every merge on its own merit instead of blurring into a paraphrase of a paraphrase.
Deterministic, so tests can assert on it.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CountFn = Callable[[str], int]

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_SPACE = re.compile(r"\s+")
_DATED = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] ")
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_NUMBER = re.compile(r"\d+")
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][\w'’-]+")  # a capitalised word inside a sentence
LINE_MAX_CHARS = 240
SPEAKERS = {"user": "User", "assistant": "Assistant"}
_COMMON = frozenset(
    """a an and are as at be but by do for from had has have i i'm in is it its me my of on or
    our so that the their them they this to was we were what with you your just really very""".split()
)


def _words(text: str) -> set[str]:
    """Distinct content words (and CJK characters) of a text, lower-cased."""
    low = text.lower()
    return {w for w in _WORD.findall(low) if w not in _COMMON and not _CJK.search(w)} | set(
        _CJK.findall(low)
    )


class _Rarity:
    """Word rarity over the sentences of one range: ``score`` is a sentence's information."""

    def __init__(self, sentences: Sequence[str]) -> None:
        self.n = max(len(sentences), 1)
        self.df: Counter[str] = Counter()
        self.repeats: Counter[str] = Counter(_key(s) for s in sentences)
        for s in sentences:
            self.df.update(_words(s))

    def score(self, sentence: str) -> float:
        if self.repeats[_key(sentence)] >= 3:  # boilerplate someone keeps saying
            return 0.0
        info = sum(math.log(self.n / self.df.get(w, 1)) for w in _words(sentence))
        bonus = 1.5 * min(len(_NAME.findall(sentence)), 3) + min(len(_NUMBER.findall(sentence)), 2)
        return round(info + bonus, 6)


def _key(sentence: str) -> str:
    return _SPACE.sub(" ", sentence.strip().lower())


def _sentences(text: str) -> list[str]:
    flat = _SPACE.sub(" ", text).strip()
    return [p.strip() for p in _SENTENCE.split(flat) if p.strip()]


def day_of(ms: int) -> str:
    if not ms or ms <= 0:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")


def message_line(role: str, text: str, rarity: _Rarity | None = None) -> str:
    """One summary line for a message: the speaker and its most informative sentence(s), capped."""
    parts = _sentences(text)
    if not parts:
        return ""
    rarity = rarity or _Rarity(parts)
    order = sorted(range(len(parts)), key=lambda i: (-rarity.score(parts[i]), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        if chosen and (used + len(parts[i]) > LINE_MAX_CHARS or used >= 80):
            break
        if chosen and rarity.score(parts[i]) == 0:
            break
        chosen.append(i)
        used += len(parts[i]) + 1
    line = " ".join(parts[i] for i in sorted(chosen))
    if len(line) > LINE_MAX_CHARS:
        line = line[: LINE_MAX_CHARS - 1].rstrip() + "…"
    return f"- {SPEAKERS.get(role, role.capitalize())}: {line}"


@dataclass(frozen=True)
class _Line:
    text: str  # without the date
    day: str  # YYYY-MM-DD or ""
    speaker: str
    index: int
    score: float


def _parse(lines: Sequence[str]) -> list[_Line]:
    """Lines with their date carried forward from the last dated line, scored over all of them."""
    raw_lines, days, day = [], [], ""
    for line in (ln for ln in lines if ln.strip()):
        m = _DATED.match(line)
        if m:
            day = m.group(1)
        raw_lines.append(line[m.end() :] if m else line)
        days.append(day)
    bodies = [r.split(": ", 1)[1] if r.startswith("- ") and ": " in r else r for r in raw_lines]
    rarity = _Rarity(bodies)
    return [
        _Line(raw, d, raw.split(":", 1)[0] if raw.startswith("- ") else "", i, rarity.score(b))
        for i, (raw, d, b) in enumerate(zip(raw_lines, days, bodies, strict=True))
    ]


def _render(lines: Sequence[_Line]) -> list[str]:
    """Kept lines in order, the first of each day with its date."""
    out, day = [], None
    for ln in lines:
        out.append(f"[{ln.day}] {ln.text}" if ln.day and ln.day != day else ln.text)
        day = ln.day or day
    return out


def _balanced_order(lines: Sequence[_Line]) -> list[_Line]:
    """Each speaker's lines best first, interleaved in proportion to how many lines each has."""
    by: dict[str, list[_Line]] = {}
    for ln in lines:
        by.setdefault(ln.speaker, []).append(ln)
    for lst in by.values():
        lst.sort(key=lambda x: (-x.score, x.index))
    taken = dict.fromkeys(by, 0)
    out: list[_Line] = []
    while len(out) < len(lines):
        # the speaker furthest below its share goes next (ties: the better line)
        sp = min(
            (s for s in by if taken[s] < len(by[s])),
            key=lambda s: (taken[s] / len(by[s]), -by[s][taken[s]].score, by[s][taken[s]].index),
        )
        out.append(by[sp][taken[sp]])
        taken[sp] += 1
    return out


def _shorten(line: str, max_tokens: int, count: CountFn) -> str:
    words = line.split(" ")
    while len(words) > 1 and count(" ".join(words) + "…") > max_tokens:
        words.pop()
    out = " ".join(words) + "…"
    return out if count(out) <= max_tokens else ""


def select_lines(lines: Sequence[str], max_tokens: int, count: CountFn) -> list[str]:
    """The best lines within ``max_tokens`` (joined by newlines), in their original order, dated.

    Lines that carry nothing (score 0: repeated boilerplate) go first; when not even one whole
    line fits, the best line is shortened word by word.
    """
    parsed = _parse(lines)
    if not parsed or max_tokens <= 0:
        return []
    every = _render(parsed)
    if count("\n".join(every)) <= max_tokens:
        return every
    chosen: list[_Line] = []
    used = 0
    for ln in _balanced_order([x for x in parsed if x.score > 0] or parsed):
        n = count(ln.text) + 1 + (6 if ln.day else 0)  # room for a date prefix
        if used + n <= max_tokens:
            chosen.append(ln)
            used += n
    chosen.sort(key=lambda x: x.index)
    out = _render(chosen)
    while out and count("\n".join(out)) > max_tokens:  # joins may cost a token more than planned
        chosen.pop(0)
        out = _render(chosen)
    if not out:
        best = max(parsed, key=lambda x: (x.score, -x.index))
        short = _shorten(best.text, max_tokens, count)
        out = [short] if short else []
    return out


def summarize_messages(items: Sequence[tuple], max_tokens: int, count: CountFn) -> str:
    """An extractive summary of ``(role, text[, created_at ms])`` messages within ``max_tokens``."""
    rarity = _Rarity([s for item in items for s in _sentences(item[1])])
    lines, day = [], ""
    for item in items:
        line = message_line(item[0], item[1], rarity)
        if not line:
            continue
        d = day_of(item[2]) if len(item) > 2 else ""
        if d and d != day:
            line = f"[{d}] {line}"
            day = d
        lines.append(line)
    return "\n".join(select_lines(lines, max_tokens, count))


def merge_summaries(texts: Sequence[str], max_tokens: int, count: CountFn) -> str:
    """Fold several summaries into one coarser summary within ``max_tokens``."""
    lines = [ln for t in texts for ln in t.splitlines() if ln.strip()]
    return "\n".join(select_lines(lines, max_tokens, count))

"""An extractive summariser: the demo provider's stand-in for a model-written summary (pure).

The offline default must compact too, or a demo conversation would silently lose its beginning.
Instead of asking a model, this picks sentences: one line per message (its first sentence or two,
prefixed with the speaker), and when that is over the token target it keeps the most informative
lines — user lines first, then lines with names, numbers or stated preferences — in their original
order. Merging summaries into a coarser one re-selects among the existing lines the same way.
Deterministic, so tests can assert on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

CountFn = Callable[[str], int]

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_SPACE = re.compile(r"\s+")
_INFORMATIVE = re.compile(
    r"\d|\b[A-Z][a-z]{2,}|\b(my|name|prefer|like|love|hate|live|moved|favou?rite|always|never|"
    r"don't|remember|call me|need|want|plan|deadline|because)\b|我|喜欢|不要|记住|需要|希望",
    re.I,
)
LINE_MAX_CHARS = 240
SPEAKERS = {"user": "User", "assistant": "Assistant"}


def message_line(role: str, text: str) -> str:
    """One summary line for a message: the speaker and its first sentence(s), capped."""
    flat = _SPACE.sub(" ", text).strip()
    if not flat:
        return ""
    parts = [p for p in _SENTENCE.split(flat) if p.strip()]
    line = ""
    for p in parts:
        cand = (line + " " + p).strip() if line else p.strip()
        if len(cand) > LINE_MAX_CHARS and line:
            break
        line = cand
        if len(line) >= 80:
            break
    if len(line) > LINE_MAX_CHARS:
        line = line[: LINE_MAX_CHARS - 1].rstrip() + "…"
    return f"- {SPEAKERS.get(role, role.capitalize())}: {line}"


def _score(line: str, index: int) -> tuple:
    user = line.startswith("- User:")
    hits = len(_INFORMATIVE.findall(line))
    return (1 if user else 0, min(hits, 5), -index)  # earlier lines win ties (older facts last)


def _shorten(line: str, max_tokens: int, count: CountFn) -> str:
    words = line.split(" ")
    while len(words) > 1 and count(" ".join(words) + "…") > max_tokens:
        words.pop()
    out = " ".join(words) + "…"
    return out if count(out) <= max_tokens else ""


def select_lines(lines: Sequence[str], max_tokens: int, count: CountFn) -> list[str]:
    """The best lines within ``max_tokens`` (joined by newlines), in their original order.

    When not even one whole line fits, the best line is shortened word by word.
    """
    lines = [ln for ln in lines if ln.strip()]
    if not lines or max_tokens <= 0:
        return []
    if count("\n".join(lines)) <= max_tokens:
        return list(lines)
    ranked = sorted(range(len(lines)), key=lambda i: _score(lines[i], i), reverse=True)
    chosen: set[int] = set()
    used = 0
    for i in ranked:
        n = count(lines[i]) + 1
        if used + n <= max_tokens:
            chosen.add(i)
            used += n
    out = [lines[i] for i in sorted(chosen)]
    while out and count("\n".join(out)) > max_tokens:  # joins may cost a token more than planned
        out.pop(0)
    if not out:
        short = _shorten(lines[ranked[0]], max_tokens, count)
        out = [short] if short else []
    return out


def summarize_messages(items: Sequence[tuple[str, str]], max_tokens: int, count: CountFn) -> str:
    """An extractive summary of ``(role, text)`` messages within ``max_tokens``."""
    lines = [message_line(role, text) for role, text in items]
    return "\n".join(select_lines(lines, max_tokens, count))


def merge_summaries(texts: Sequence[str], max_tokens: int, count: CountFn) -> str:
    """Fold several summaries into one coarser summary within ``max_tokens``."""
    lines = [ln for t in texts for ln in t.splitlines() if ln.strip()]
    return "\n".join(select_lines(lines, max_tokens, count))

"""Query cleaning, LIKE escaping and hit snippets (pure).

A user's ``%`` or ``_`` must match itself, not act as a wildcard, so the query is escaped with
``\\`` and the SQL uses ``ESCAPE '\\'``. The snippet is cut around the first case-insensitive hit
and reports where the hit sits inside it, so a client can highlight it without re-searching.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..db.fulltext import CJK_RUN

MIN_QUERY = 2
ESCAPE = "\\"


def clean_query(q: str) -> str | None:
    """The trimmed query, or None when it is shorter than ``MIN_QUERY`` characters."""
    q = q.strip()
    return q if len(q) >= MIN_QUERY else None


def like_pattern(q: str) -> str:
    """``%q%`` with LIKE's metacharacters (and the escape character itself) escaped."""
    escaped = q.replace(ESCAPE, ESCAPE * 2).replace("%", ESCAPE + "%").replace("_", ESCAPE + "_")
    return f"%{escaped}%"


def _pattern(q: str | Sequence[str]) -> re.Pattern:
    """A phrase (``str``) or any of several index terms, each word starting at a word boundary
    (CJK terms match anywhere: there are no word boundaries inside a run)."""
    if isinstance(q, str):
        return re.compile(re.escape(re.sub(r"\s+", " ", q)), re.IGNORECASE)
    alts = sorted({t for t in q if t}, key=len, reverse=True)
    if not alts:
        return re.compile(r"(?!)")
    return re.compile(
        "|".join(("" if CJK_RUN.match(t) else r"(?<![^\W_])") + re.escape(t) for t in alts),
        re.IGNORECASE,
    )


def snippet(text: str, q: str | Sequence[str], radius: int = 60) -> dict:
    """``{"text", "match_start", "match_end"}``: up to ``radius`` characters either side of the
    first hit of the phrase ``q`` (or of any of the terms ``q``), whitespace runs collapsed, "…" where the text was cut. Without a hit (a case
    mapping the database and Python disagree on) the head of the text, match offsets -1."""
    flat = re.sub(r"\s+", " ", text).strip()
    m = _pattern(q).search(flat)
    if m is None:
        head = flat[: 2 * radius]
        return {
            "text": head + ("…" if len(flat) > len(head) else ""),
            "match_start": -1,
            "match_end": -1,
        }
    start, end = max(0, m.start() - radius), min(len(flat), m.end() + radius)
    prefix = "…" if start > 0 else ""
    body = prefix + flat[start:end] + ("…" if end < len(flat) else "")
    offset = len(prefix) + m.start() - start
    return {"text": body, "match_start": offset, "match_end": offset + (m.end() - m.start())}

"""Query cleaning, LIKE escaping and hit snippets (pure).

A user's ``%`` or ``_`` must match itself, not act as a wildcard, so the query is escaped with
``\\`` and the SQL uses ``ESCAPE '\\'``. The snippet is cut around the first case-insensitive hit
and reports where the hit sits inside it, so a client can highlight it without re-searching.
"""

from __future__ import annotations

import re

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


def snippet(text: str, q: str, radius: int = 60) -> dict:
    """``{"text", "match_start", "match_end"}``: up to ``radius`` characters either side of the
    first hit, whitespace runs collapsed, "…" where the text was cut. Without a hit (a case
    mapping the database and Python disagree on) the head of the text, match offsets -1."""
    flat = re.sub(r"\s+", " ", text).strip()
    m = re.search(re.escape(re.sub(r"\s+", " ", q)), flat, re.IGNORECASE)
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

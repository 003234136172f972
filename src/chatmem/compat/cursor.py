"""The history cursor (pure): seed 000's bare ``createdAtMs`` plus an optional ``:<id>`` tie-breaker.

Seed 000 pages with ``created_at_ms < cursor``, so messages sharing the boundary millisecond are
skipped. chatmem orders by ``(created_at, id)`` and emits ``"<ms>:<id>"`` when the boundary
millisecond is shared by an older message (the next page then continues strictly after that
``(ms, id)`` pair), and the seed's bare ``"<ms>"`` otherwise — so a seed client sees exactly the
seed's values in the common case and nothing is ever skipped or repeated. Both forms are accepted.
A cursor whose millisecond part is not a positive finite number is rejected ("Invalid cursor").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_MS = 2**62
MAX_ID = 128


class InvalidCursor(ValueError):
    pass


@dataclass(frozen=True)
class Cursor:
    """Rows strictly older than ``(ms, id)`` in (created_at, id) order; ``id`` None = before ``ms``."""

    ms: int
    id: str | None = None


def parse(raw: str) -> Cursor:
    text = raw.strip()
    ms_part, sep, id_part = text.partition(":")
    try:
        value = float(ms_part)
    except ValueError:
        raise InvalidCursor(raw) from None
    if not math.isfinite(value) or value <= 0:
        raise InvalidCursor(raw)
    if sep:
        if not value.is_integer() or not id_part or len(id_part) > MAX_ID:
            raise InvalidCursor(raw)
        return Cursor(min(int(value), MAX_MS), id_part)
    # created_at < value for integer created_at  ⇔  created_at < ceil(value)
    return Cursor(min(math.ceil(value), MAX_MS))


def emit(oldest_ms: int, oldest_id: str, next_older_ms: int | None) -> str:
    """The cursor after a page whose oldest row is (oldest_ms, oldest_id)."""
    if next_older_ms is not None and next_older_ms == oldest_ms:
        return f"{oldest_ms}:{oldest_id}"
    return str(oldest_ms)

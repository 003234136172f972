"""The history cursor (pure): seed 000's (docs/specs.md) bare ``createdAtMs`` plus optional tie-breakers.

Seed 000 pages with ``created_at_ms < cursor``, so messages sharing the boundary millisecond are
skipped. chatmem orders a conversation's messages by ``(created_at, depth, id)`` — ``depth`` first
among equal times because a turn writes its user message and the assistant placeholder in the same
millisecond, and the question must read before its answer. After a page whose oldest message shares
its millisecond with an older one, the cursor is ``"<ms>:<depth>:<id>"`` and the next page continues
strictly after that key; otherwise it is the seed's bare ``"<ms>"``. A seed client therefore sees
the seed's values in the common case, and nothing is ever skipped or repeated.

Accepted forms: ``"<ms>"`` (strictly older than that millisecond; any positive finite number, as
the seed's ``Number(cursor)``), ``"<ms>:<depth>:<id>"`` and ``"<ms>:<id>"`` (the message's depth is
looked up). A millisecond part that is not a positive finite number, or a depth that is not a
64-bit count in ASCII digits, is "Invalid cursor".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_MS = 2**62
MAX_DEPTH = 2**63 - 1  # messages.depth is BIGINT: a larger one is no cursor we ever made
MAX_ID = 128


class InvalidCursor(ValueError):
    pass


@dataclass(frozen=True)
class Cursor:
    """Rows strictly older than ``(ms, depth, id)``; ``id`` None = older than ``ms``; ``depth``
    None = to be looked up from ``id``."""

    ms: int
    id: str | None = None
    depth: int | None = None


def parse(raw: str) -> Cursor:
    text = raw.strip()
    ms_part, sep, rest = text.partition(":")
    try:
        value = float(ms_part)
    except ValueError:
        raise InvalidCursor(raw) from None
    if not math.isfinite(value) or value <= 0:
        raise InvalidCursor(raw)
    if not sep:
        # created_at < value for integer created_at  ⇔  created_at < ceil(value)
        return Cursor(min(math.ceil(value), MAX_MS))
    if not value.is_integer():
        raise InvalidCursor(raw)
    depth_part, sep2, id_part = rest.partition(":")
    depth = None
    if sep2:
        # ASCII digits only ("²".isdigit() is true), and within the column's 64 bits
        if not (depth_part.isascii() and depth_part.isdigit()) or len(depth_part) > 19:
            raise InvalidCursor(raw)
        depth = int(depth_part)
        if depth > MAX_DEPTH:
            raise InvalidCursor(raw)
    else:
        id_part = rest
    if not id_part or len(id_part) > MAX_ID or ":" in id_part:
        raise InvalidCursor(raw)
    return Cursor(min(int(value), MAX_MS), id_part, depth)


def emit(oldest_ms: int, oldest_depth: int, oldest_id: str, next_older_ms: int) -> str:
    """The cursor after a page whose oldest row is ``oldest``, when an older row exists."""
    if next_older_ms == oldest_ms:
        return f"{oldest_ms}:{oldest_depth}:{oldest_id}"
    return str(oldest_ms)

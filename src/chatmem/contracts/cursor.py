"""Opaque list cursors: the one encoder/decoder every paginated native list uses.

Why it exists: conversation lists, memory lists and problem-report lists all page by a tuple of
sort keys (a time and an id, …). The cursor is that tuple as URL-safe base64 JSON; decoding checks
the exact types and BIGINT range, so a forged cursor answers 400 ``invalid_cursor`` instead of
reaching a query. (The seed-000 ``/rpc`` history cursor has its own format: compat/cursor.py.)
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..errors import BadRequest


def encode_cursor(*parts: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, types: tuple[type, ...]) -> tuple:
    """Parse an opaque cursor made by ``encode_cursor``; anything else → 400 invalid_cursor."""
    try:
        pad = "=" * (-len(cursor) % 4)
        parts = json.loads(base64.urlsafe_b64decode(cursor + pad))
        if not isinstance(parts, list) or len(parts) != len(types):
            raise ValueError
        for v, typ in zip(parts, types, strict=True):  # lengths checked above
            if type(v) is not typ:  # exact: bool is not an int here
                raise ValueError
            if isinstance(v, int) and not -(2**63) <= v < 2**63:  # must fit a BIGINT
                raise ValueError
        return tuple(parts)
    except (ValueError, TypeError):
        raise BadRequest("invalid cursor", code="invalid_cursor") from None

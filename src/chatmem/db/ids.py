"""Identifiers: ``<prefix>_`` + a time-ordered 128-bit value (48-bit ms clock + 80 random bits).

Seed ids are 12 hex digits, which collide at internet scale; ours sort by creation time (so an id is
a tie-breaker for rows created in the same millisecond) and are unique within a process even when
many are made in one millisecond (the random part is incremented, ULID-style).
"""

from __future__ import annotations

import secrets
import threading
import time

_lock = threading.Lock()
_last_ms = 0
_last_rand = 0
_RAND_BITS = 80
_RAND_MAX = (1 << _RAND_BITS) - 1


def _next_value() -> int:
    global _last_ms, _last_rand  # noqa: PLW0603 - the process-wide monotonic id state
    with _lock:
        now = time.time_ns() // 1_000_000
        if now <= _last_ms:
            now = _last_ms
            _last_rand += 1
            if _last_rand > _RAND_MAX:  # astronomically unlikely; move to the next ms
                now += 1
                _last_rand = secrets.randbits(_RAND_BITS - 1)
        else:
            _last_rand = secrets.randbits(_RAND_BITS - 1)  # leave headroom for increments
        _last_ms = now
        return (now << _RAND_BITS) | _last_rand


def new_id(prefix: str) -> str:
    """A new id such as ``msg_0193a4…`` (32 lowercase hex digits after the prefix)."""
    return f"{prefix}_{_next_value():032x}"


def share_token() -> str:
    """A 192-bit random public token (hex), as seed 001's (docs/specs.md) genToken()."""
    return secrets.token_hex(24)


def secret_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)

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


#: the hex digits an id block varies (its last 8): one block holds at most 2**32 ids
_BLOCK_BITS = 32


def id_block(prefix: str, count: int) -> tuple[str, int]:
    """Reserve ``count`` consecutive ids at once: ``(head, low)`` such that the ids are
    ``head + f"{low + i:08x}"`` for ``i`` in ``range(count)`` — time-ordered like ``new_id``'s,
    unique in the process, and computable in SQL (a fork names 10,000 copies in the statement
    that writes them)."""
    global _last_ms, _last_rand
    if not 0 < count <= 1 << _BLOCK_BITS:
        raise ValueError("an id block holds 1 to 2**32 ids")
    mask = (1 << _BLOCK_BITS) - 1
    with _lock:
        now = time.time_ns() // 1_000_000
        if now <= _last_ms:
            now, rand = _last_ms, _last_rand + 1
        else:
            rand = secrets.randbits(_RAND_BITS - 1)
        if (rand & mask) + count > mask + 1:  # the block would carry into the fixed digits
            rand = (rand | mask) + 1
        if rand + count - 1 > _RAND_MAX:  # astronomically unlikely; move to the next ms
            now, rand = now + 1, 0
        _last_ms, _last_rand = now, rand + count - 1
        first = (now << _RAND_BITS) | rand
    digits = f"{first:032x}"
    return f"{prefix}_{digits[:-8]}", first & mask


def share_token() -> str:
    """A 192-bit random public token (hex), as seed 001's (docs/specs.md) genToken()."""
    return secrets.token_hex(24)


def secret_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)

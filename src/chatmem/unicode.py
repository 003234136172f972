"""Text that both databases can store (pure): no NUL characters, no lone UTF-16 surrogates.

JSON may spell any UTF-16 code unit (``"\\ud800"``), and Python decodes a lone surrogate into a
``str`` that no UTF-8 encoder accepts: SQLite's driver, PostgreSQL's JSONB and the JSON response
writer all fail on it (a 500, or a row stored on SQLite that every later read fails to render).
PostgreSQL text cannot hold NUL either. So request bodies are refused when they hold either
(``problem``), and text that comes from elsewhere — a model's stream, an upstream's JSON — is
made storable instead (``scrub``: each offending character becomes U+FFFD).
"""

from __future__ import annotations

import re
from typing import Any

_BAD = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def _text_problem(s: str) -> str | None:
    m = _BAD.search(s)
    if m is None:
        return None
    return "NUL characters" if m.group() == "\x00" else "lone UTF-16 surrogates"


def problem(value: Any) -> str | None:
    """What makes a JSON-like value unstorable ('NUL characters', 'lone UTF-16 surrogates'),
    looking at every string, dictionary key included; None when it is fine."""
    if isinstance(value, str):
        return _text_problem(value)
    if isinstance(value, dict):
        for k, v in value.items():
            p = problem(k) or problem(v)
            if p:
                return p
    elif isinstance(value, (list, tuple)):
        for v in value:
            p = problem(v)
            if p:
                return p
    return None


def scrub(text: str) -> str:
    """``text`` with NUL and lone surrogates replaced by U+FFFD (cheap when there are none)."""
    return _BAD.sub(REPLACEMENT, text) if _BAD.search(text) else text


def has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None

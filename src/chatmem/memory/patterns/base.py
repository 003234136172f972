"""What every offline-extractor pattern is made of (pure): the ``Pattern`` record, the value
captures that stop where another clause starts, and how long a time-bound statement stays valid.

The English and Chinese tables (``en.py``, ``zh.py``) are built from these; ``__init__`` joins them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import when

DAY = 86_400_000
MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"

# English values stop at punctuation or at a conjunction/adverbial that starts another clause.
_V = r"(?P<v>[^,.;!?\n]+?)"
END = (
    r"(?=\s+(?:and|but|so|because|since|although|though|while|with|for|now|right now|"
    r"these days|at the moment|which|who|where|anymore|until|starting|from now on)\b"
    rf"|\s+{when.EN}\b|\s+in (?:{MONTHS}|\d{{4}})\b|\s*[,.;!?\n]|\s*$)"
)
V = _V + END
# Chinese values stop at punctuation, a conjunction or a sentence-final particle.
_ZV = r"(?P<v>[^\s，。！？,.!?；;、：:]{1,30}?)"
_ZEND = r"(?=[\s，。！？,.!?；;、]|和|而且|但是|所以|因为|吧|啦|呀|了|哦|就好|就行|$)"
ZV = _ZV + _ZEND


LANGS = (
    "english|chinese|mandarin|cantonese|french|german|spanish|japanese|korean|italian|"
    "portuguese|russian|arabic|dutch|hindi"
)
DURATION = rf"(?P<t>{when.EN})"


@dataclass(frozen=True)
class Pattern:
    name: str
    lang: str  # en | zh
    regex: str
    slot: str  # '' = no slot; may use {k} (the 'k' group, normalised)
    memory_type: str  # location | preference | identity | schedule | habit | goal | constraint
    template: str  # uses {v} (the value) and optionally {k}, {t}
    example: str
    expect: str  # the value the example must yield
    importance: int = 3
    confidence: float = 0.75
    ttl_ms: int | None = None  # time-bound (QUERY_DEPENDENT) when set or when a 't' group matches
    agent_type: str = ""  # seed-000 (docs/specs.md) type override for agent conversations
    stop: tuple[str, ...] = ()  # values that mean the pattern misfired

    def compiled(self) -> re.Pattern:
        return _compile(self.regex)


_CACHE: dict[str, re.Pattern] = {}


def _compile(rx: str) -> re.Pattern:
    p = _CACHE.get(rx)
    if p is None:
        p = _CACHE[rx] = re.compile(rx, re.I)
    return p


#: English duration words → how long a time-bound statement stays valid.
_EN_NUM = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def duration_ms(t: str, default: int | None) -> int | None:
    """Validity length for a duration phrase ('this week', 'for 3 days', '这周' …)."""
    t = (t or "").strip().lower()
    if not t:
        return default
    fixed = {
        "today": DAY,
        "tonight": DAY,
        "this weekend": 3 * DAY,
        "this week": 7 * DAY,
        "next week": 14 * DAY,
        "this month": 31 * DAY,
        "今天": DAY,
        "这几天": 5 * DAY,
        "这周": 7 * DAY,
        "本周": 7 * DAY,
        "下周": 14 * DAY,
        "这个月": 31 * DAY,
        "最近": 14 * DAY,
    }
    if t in fixed:
        return fixed[t]
    m = re.match(r"for (\w+) (day|week)s?", t)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _EN_NUM.get(m.group(1), 1)
        return n * (DAY if m.group(2) == "day" else 7 * DAY)
    return default

"""The offline extractor's pattern tables: English and Chinese first-person statements (pure).

Why it exists: the demo provider (and any deployment without a model budget for extraction) still
needs long-term memory. Each pattern recognises one kind of first-person statement ("I live in …",
"我住在…"), names its slot (so a later "I moved to …" supersedes it deterministically), its type and a
one-line memory text. Every pattern carries an example and the value it must yield; the test suite
runs every one of them.

Only first-person forms are matched ("my sister lives in Rome" is not a fact about the user), and
questions are skipped by the extractor, not here.
"""

from __future__ import annotations

from .base import DAY, Pattern, duration_ms
from .en import EN
from .zh import _QUESTION_ZH, ZH, ZH_RELATIONS

__all__ = [
    "AGENT_TYPES",
    "ALL",
    "DAY",
    "EN",
    "QUESTION_WORDS_EN",
    "QUESTION_WORDS_ZH",
    "VAGUE_EN",
    "ZH",
    "ZH_RELATIONS",
    "Pattern",
    "duration_ms",
]

ALL: tuple[Pattern, ...] = EN + ZH

QUESTION_WORDS_EN = ("what", "who", "where", "which", "how", "why", "when", "whether")
QUESTION_WORDS_ZH = _QUESTION_ZH
VAGUE_EN = (
    "it",
    "that",
    "this",
    "these",
    "those",
    "you",
    "your",
    "him",
    "her",
    "them",
    "so",
    "to know",
    "to ask",
    "a lot",
)

#: Seed-001 types → seed-000 agent types (used in agent conversations).
AGENT_TYPES = {
    "constraint": "边界",
    "preference": "偏好",
    "habit": "偏好",
    "goal": "关系目标",
    "identity": "重要事实",
    "location": "重要事实",
    "schedule": "重要事实",
}

"""The languages chatmem speaks to people (pure): which one a user gets, and the few strings the
server itself writes into their data (the default conversation title).

A user's language is their ``settings.language`` (the web app sets it from the browser language or
the user's choice); without one, the request's ``Accept-Language``; otherwise English.
"""

from __future__ import annotations

LANGUAGES = ("en", "zh")
FALLBACK = "en"

#: The title a conversation has until one is generated from its first turn.
DEFAULT_TITLES = {"en": "New chat", "zh": "新对话"}


def from_accept_language(header: str | None) -> str | None:
    """The first supported language in an ``Accept-Language`` header, by quality then order."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and q > 0:
            ranked.append((-q, i, primary))
    return min(ranked)[2] if ranked else None


def pick_language(setting: object, accept_language: str | None = None) -> str:
    if isinstance(setting, str) and setting in LANGUAGES:
        return setting
    return from_accept_language(accept_language) or FALLBACK


def default_title(language: str) -> str:
    return DEFAULT_TITLES.get(language, DEFAULT_TITLES[FALLBACK])

"""The offline demo provider: deterministic answers built from the context it was given.

It exists so that chatmem runs (and its tests run) without a model or a network, while still making
the other features visible: the reply repeats the question and names the memories and the summary
the context assembler put in front of it. It streams word by word with ``demo_delay_ms`` between
tokens, is at least ``demo_min_tokens`` tokens long, and reports usage like a real provider.

A model with ``options.clock`` streams, instead of words, the wall-clock millisecond at which each
token was produced (``" t1764582000123"``): what the durability tests and bench/flush.py read back
after a SIGKILL to tell how old the newest unsaved text was, by content rather than by timers.

``compose_reply`` is pure and unit-tested on its own.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator

from .base import ChatMessage, Finish, ModelInfo, ProviderEvent, TextDelta, Usage, estimate_tokens

FILLER = (
    "This answer comes from the offline demo model of chatmem, which replies from the "
    "context it was given instead of calling a real language model."
)
_SUMMARY_TAG = re.compile(r"<conversation-summary>(.*?)</conversation-summary>", re.S | re.I)
_BULLET = re.compile(
    r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$|^\s*(\[(?:CURRENT|CONTEXT-DEPENDENT)\].*\S)\s*$"
)
_TAGS = re.compile(r"^(?:\[[^\]]{1,40}\]\s*)+")
_INNER_TAGS = re.compile(r"</?summary[^>]*>")
_MEMORY_WORDS = ("memor", "remember", "记忆", "记住")


def _sections(text: str) -> dict[str, list[str]]:
    """Bullet lines grouped under the nearest preceding non-bullet header line (lower-cased)."""
    out: dict[str, list[str]] = {}
    header = ""
    for line in text.splitlines():
        m = _BULLET.match(line)
        if m:
            out.setdefault(header, []).append(_TAGS.sub("", m.group(1) or m.group(2)).strip())
        elif line.strip():
            header = line.strip().lower()
    return out


def find_memories(messages: list[ChatMessage]) -> list[str]:
    found: list[str] = []
    for m in messages:
        if m.role != "system":
            continue
        for header, items in _sections(m.content).items():
            if any(w in header for w in _MEMORY_WORDS):
                found.extend(i for i in items if i)
    return found


def find_summary(messages: list[ChatMessage]) -> str:
    parts: list[str] = []
    for m in messages:
        for raw in _SUMMARY_TAG.findall(m.content):
            s = " ".join(_INNER_TAGS.sub(" ", raw).split())
            if s:
                parts.append(s)
    if parts:
        return " ".join(parts)
    for m in messages:  # a summary under a header line ("…summary:" / "…摘要：") in a system prompt
        if m.role != "system":
            continue
        taking = False
        for line in m.content.splitlines():
            low = line.strip().lower()
            if taking:
                if not low:
                    break
                parts.append(line.strip())
            elif ("summary" in low or "摘要" in low) and low.endswith((":", "：")):
                taking = True
    return " ".join(parts)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def compose_reply(messages: list[ChatMessage], min_tokens: int) -> str:
    """The demo answer for a context: question, memories, summary, then filler up to min_tokens."""
    question = next((m.content for m in reversed(messages) if m.role == "user"), "")
    question = _SUMMARY_TAG.sub("", question).strip()
    turns = sum(1 for m in messages if m.role == "user")
    parts = [f'You asked: "{_clip(question, 200)}".' if question else "You said nothing yet."]
    memories = find_memories(messages)
    if memories:
        parts.append(
            "I remember "
            + str(len(memories))
            + " things about you: "
            + "; ".join(_clip(x, 120) for x in memories[:10])
            + "."
        )
    summary = find_summary(messages)
    if summary:
        parts.append(f"Summary of our earlier conversation: {_clip(summary, 240)}")
    parts.append(f"This is message {turns} from you in this conversation.")
    text = " ".join(parts)
    have, per = len(text.split()), len(FILLER.split())
    if have < min_tokens:
        text += (" " + FILLER) * -(-(min_tokens - have) // per)  # ceil: whole fillers
    return text


#: Words delivered per loop turn when the demo runs at 0 ms per token.
CHUNK = 8


class DemoProvider:
    """Streams ``compose_reply`` word by word; never fails, never touches the network."""

    name = "demo"

    def __init__(self, settings=None) -> None:
        self.delay_s = (getattr(settings, "demo_delay_ms", 20) or 0) / 1000.0
        self.min_tokens = getattr(settings, "demo_min_tokens", 40)

    async def stream(
        self, model: ModelInfo, messages: list[ChatMessage], *, max_tokens: int
    ) -> AsyncIterator[ProviderEvent]:
        words = compose_reply(messages, self.min_tokens).split(" ")
        stop = "end_turn"
        if max_tokens and len(words) > max_tokens:
            words, stop = words[:max_tokens], "max_tokens"
        clock = bool(model.options.get("clock"))
        for i, w in enumerate(words):
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            elif i % CHUNK == 0:
                # At 0 ms per token, words arrive the way a real stream delivers them: several
                # per network read, with the event loop free between reads.
                await asyncio.sleep(0)
            word = f"t{time.time_ns() // 1_000_000}" if clock else w
            yield TextDelta(word if i == 0 else " " + word)
        yield Usage(
            input_tokens=sum(estimate_tokens(m.content) for m in messages), output_tokens=len(words)
        )
        yield Finish(stop)

    async def aclose(self) -> None:
        return None

"""Message content as typed blocks, and the plain-text projections derived from them (pure).

A message's ``blocks`` is a JSON list of ``{"kind": …}`` objects (seed 001's (docs/specs.md) ten kinds). Its visible
text — what search scans (``search_text``), what the seed-000 API calls ``content`` and what context
assembly counts — is the concatenation of its ``text`` blocks only: thinking, tool data and media
never leak into search or into another model's prompt by accident.
"""

from __future__ import annotations

from typing import Any

BLOCK_KINDS = (
    "text",
    "thinking",
    "tool_call",
    "tool_output",
    "citation",
    "image",
    "document",
    "artifact",
    "research",
    "error",
)


class BlockError(ValueError):
    """Content that is not a string or a valid list of blocks."""


def normalize(content: Any) -> list[dict]:
    """A string becomes one text block; a list of blocks is validated and copied."""
    if isinstance(content, str):
        return [{"kind": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise BlockError("content must be a string or a non-empty list of blocks")
    out = []
    for i, b in enumerate(content):
        if not isinstance(b, dict):
            raise BlockError(f"block {i} must be an object")
        kind = b.get("kind", b.get("type"))
        if kind not in BLOCK_KINDS:
            raise BlockError(f"block {i}: kind must be one of {', '.join(BLOCK_KINDS)}")
        block = {k: v for k, v in b.items() if k != "type"}
        block["kind"] = kind
        if kind in ("text", "thinking") and not isinstance(block.get("text"), str):
            raise BlockError(f"block {i}: a {kind} block needs a string 'text'")
        out.append(block)
    return out


def visible_text(blocks: list[dict] | None) -> str:
    """The user-visible text: the text blocks joined (seed 001's search_text projection)."""
    return "".join(b.get("text", "") for b in blocks or () if b.get("kind") == "text")


def thinking_text(blocks: list[dict] | None) -> str:
    return "".join(b.get("text", "") for b in blocks or () if b.get("kind") == "thinking")


def streamed(thinking: str, text: str, tool_calls: list[dict]) -> list[dict]:
    """The blocks of an answer from what its stream produced: thinking first, then the text
    (an empty text block when there is nothing else), then the tool calls."""
    out: list[dict] = []
    if thinking:
        out.append({"kind": "thinking", "text": thinking})
    if text or not (out or tool_calls):
        out.append({"kind": "text", "text": text})
    out.extend(tool_calls)
    return out


def from_events(events: list[dict]) -> list[dict] | None:
    """``streamed`` rebuilt from an answer's event log (``text_delta``, ``thinking_delta``,
    ``tool_call`` events); None when the log holds no content event."""
    text, thinking, calls, seen = [], [], [], False
    for e in events:
        kind, data = e.get("type"), e.get("data") or {}
        if kind == "text_delta":
            text.append(data.get("text", ""))
        elif kind == "thinking_delta":
            thinking.append(data.get("text", ""))
        elif kind == "tool_call":
            calls.append({"kind": "tool_call", **data})
        else:
            continue
        seen = True
    return streamed("".join(thinking), "".join(text), calls) if seen else None

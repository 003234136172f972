"""A Chat Completions request as chatmem sees it (pure): system prompt, history, the new turn,
and the fingerprints that let a stateless client's resent history find its conversation.

A request's messages end with the new input: the messages after its last assistant message (the
user's message, or tool results). Everything before that assistant message is the *prefix*: when
a user message was stored through /v1, the hash of the request messages up to it was recorded, so
the next request — which resends the same messages, the reply, and a new question — hashes its
prefix to that user message and continues after its answer instead of duplicating the history.
Only messages the client sent are hashed (never our stored copy of a reply), so a client that
reformats the reply text still matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SYSTEM_ROLES = ("system", "developer")

#: chatmem stop reasons → OpenAI finish reasons
FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "stopped": "stop",
    "max_tokens": "length",
    "max_duration": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def text_of(content: Any) -> str:
    """The text of a message's ``content`` (a string, or a list of parts whose text parts count)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def canonical(m: dict) -> list:
    role = "system" if m.get("role") in SYSTEM_ROLES else m.get("role")
    calls = [
        [(c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")]
        for c in m.get("tool_calls") or ()
        if isinstance(c, dict)
    ]
    return [role, text_of(m.get("content")), calls, m.get("tool_call_id") or ""]


def prefix_hash(messages: Sequence[dict]) -> str:
    raw = json.dumps([canonical(m) for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class Split:
    system: str  # the client's system/developer messages, joined
    history: list[dict]  # the conversation before the new input (no system messages)
    prefix_end: int  # request index of the last assistant message (-1: none)
    new_text: str  # the new input as one user message's text


def split(messages: Sequence[dict]) -> Split:
    system = "\n\n".join(
        text_of(m.get("content")) for m in messages if m.get("role") in SYSTEM_ROLES
    ).strip()
    last_assistant = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1
    )
    tail = [m for m in messages[last_assistant + 1 :] if m.get("role") not in SYSTEM_ROLES]
    history = [m for m in messages[: last_assistant + 1] if m.get("role") not in SYSTEM_ROLES]
    return Split(system, history, last_assistant, render_input(tail))


def tool_round_trip(messages: Sequence[dict], prefix_end: int) -> list[dict]:
    """When the new input is tool results answering the last assistant message's tool calls:
    that message and the results, in OpenAI's wire form, for a provider that speaks the tool
    protocol (the stored copies are plain text); else []."""
    if prefix_end < 0 or not messages[prefix_end].get("tool_calls"):
        return []
    tail = [m for m in messages[prefix_end + 1 :] if m.get("role") not in SYSTEM_ROLES]
    if not tail or any(m.get("role") != "tool" for m in tail):
        return []
    call = {
        k: messages[prefix_end][k]
        for k in ("role", "content", "tool_calls")
        if k in messages[prefix_end]
    }
    keep = ("role", "content", "tool_call_id", "name")
    return [call, *({k: m[k] for k in keep if k in m} for m in tail)]


def render_input(tail: Sequence[dict]) -> str:
    """The new input as text: the user's words; tool results labelled with their call id."""
    parts = []
    for m in tail:
        text = text_of(m.get("content"))
        if m.get("role") == "tool":
            parts.append(f"[tool result {m.get('tool_call_id') or ''}]\n{text}")
        elif text:
            parts.append(text)
    return "\n\n".join(parts)


def finish_reason(stop_reason: str | None, has_tool_calls: bool = False) -> str:
    if has_tool_calls:
        return "tool_calls"
    return FINISH.get(stop_reason or "end_turn", "stop")


def usage_of(u: dict | None) -> dict:
    """chatmem usage → OpenAI usage (prompt tokens include the cached ones)."""
    u = u or {}
    cached = int(u.get("cache_read_tokens") or 0)
    prompt = int(u.get("input_tokens") or 0) + cached + int(u.get("cache_write_tokens") or 0)
    prompt = prompt or int(u.get("context_tokens") or 0)
    completion = int(u.get("output_tokens") or 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }

"""What a public share may contain (pure): the whitelist applied when freezing and again on read.

The snapshot keeps, per message, only role, blocks (``tool_output`` removed), citations,
attachments, created_at, author name, ``fast`` and — unless the turn ran in fast mode — the model
label. Ids, parents, tokens, cost, credits, raw, provider, model_id and status never appear. The
same function runs on every public read, so a snapshot written by an older version (or edited by
hand) is still served redacted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ROLES = ("user", "assistant")
HIDDEN_BLOCK_KINDS = frozenset({"tool_output"})


def _blocks(blocks: Any) -> list[dict]:
    return [
        dict(b)
        for b in blocks or ()
        if isinstance(b, Mapping) and b.get("kind") not in HIDDEN_BLOCK_KINDS
    ]


def _list(v: Any) -> list:
    return list(v) if isinstance(v, (list, tuple)) else []


def public_message(m: Mapping[str, Any]) -> dict | None:
    """The shareable projection of one message mapping; None for roles that are never shared."""
    role = m.get("role")
    if role not in ROLES:
        return None
    fast = bool(m.get("fast"))
    out: dict[str, Any] = {
        "role": role,
        "blocks": _blocks(m.get("blocks")),
        "citations": _list(m.get("citations")),
        "attachments": _list(m.get("attachments")),
        "created_at": m.get("created_at") if isinstance(m.get("created_at"), int) else 0,
        "author_name": m.get("author_name") if isinstance(m.get("author_name"), str) else "",
        "fast": fast,
    }
    if role == "assistant" and not fast:
        label = m.get("model_label")
        out["model_label"] = label if isinstance(label, str) else ""
    return out


def public_messages(messages: Iterable[Any]) -> list[dict]:
    out = []
    for m in messages or ():
        if isinstance(m, Mapping):
            p = public_message(m)
            if p is not None:
                out.append(p)
    return out


def freeze(path: Iterable[Mapping[str, Any]], author_names: Mapping[str, str]) -> list[dict]:
    """The snapshot of an active path (message mappings, oldest first).

    Streaming and failed messages are left out: a share shows finished content only.
    ``author_names`` maps a user id to a display name; a user message is attributed to its
    ``author_id`` (workspace chats) or else to its ``user_id``.
    """
    out = []
    for m in path:
        if m.get("status") != "complete":
            continue
        who = m.get("author_id") or m.get("user_id") or ""
        rec = dict(m)
        rec["author_name"] = author_names.get(who, "") if m.get("role") == "user" else ""
        p = public_message(rec)
        if p is not None:
            out.append(p)
    return out

"""What a public share may contain (pure): the whitelist applied when freezing and again on read.

The snapshot keeps, per message, only role, blocks, citations, attachments, created_at, author
name, ``fast`` and — unless the turn ran in fast mode — the model label. Ids, parents, tokens,
cost, credits, raw, provider, model_id and status never appear.

Blocks are an **allow-list**, never a deny-list: only the kinds a reader sees (``PUBLIC_BLOCKS``)
survive, each with only its display keys, each value a plain string or number (no nested objects
to smuggle data in), URLs only when http(s). Model internals — ``thinking``, ``tool_call`` (its
arguments), ``tool_output``, ``error`` — and any kind or key this list does not name are dropped;
a new block kind stays private until it is added here. Citations and attachments are filtered
the same way. The same function runs on every public read, so a snapshot frozen by an older
version (or edited by hand) is served re-redacted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ROLES = ("user", "assistant")

#: kind → the keys a public reader may see (``kind`` itself is always kept).
PUBLIC_BLOCKS: dict[str, frozenset[str]] = {
    "text": frozenset({"text"}),
    "citation": frozenset({"title", "url", "text"}),
    "image": frozenset({"url", "alt", "title", "width", "height", "mime_type"}),
    "document": frozenset({"title", "name", "url", "mime_type"}),
    "artifact": frozenset({"title", "text", "language"}),
    "research": frozenset({"title", "text"}),
}
CITATION_KEYS = frozenset({"title", "url", "text"})
ATTACHMENT_KEYS = frozenset({"name", "title", "url", "mime_type", "size"})


def _scalar(key: str, v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return False
    if key == "url":
        return isinstance(v, str) and v.lower().startswith(("https://", "http://"))
    return True


def _pick(item: Mapping, keys: frozenset[str]) -> dict:
    return {k: item[k] for k in sorted(keys) if k in item and _scalar(k, item[k])}


def _blocks(blocks: Any) -> list[dict]:
    items = blocks if isinstance(blocks, (list, tuple)) else ()
    return [
        {"kind": b["kind"], **_pick(b, PUBLIC_BLOCKS[b["kind"]])}
        for b in items
        if isinstance(b, Mapping) and b.get("kind") in PUBLIC_BLOCKS
    ]


def _items(v: Any, keys: frozenset[str]) -> list[dict]:
    if not isinstance(v, (list, tuple)):
        return []
    return [p for p in (_pick(i, keys) for i in v if isinstance(i, Mapping)) if p]


def public_message(m: Mapping[str, Any]) -> dict | None:
    """The shareable projection of one message mapping; None for roles that are never shared."""
    role = m.get("role")
    if role not in ROLES:
        return None
    fast = bool(m.get("fast"))
    out: dict[str, Any] = {
        "role": role,
        "blocks": _blocks(m.get("blocks")),
        "citations": _items(m.get("citations"), CITATION_KEYS),
        "attachments": _items(m.get("attachments"), ATTACHMENT_KEYS),
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

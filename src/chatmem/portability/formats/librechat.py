"""LibreChat's conversation export (JSON): one conversation object (pure).

Shape: ``{conversationId, title, endpoint, options: {model, …}, recursive, messages: [{messageId,
parentMessageId, isCreatedByUser, sender, text, content?, model, createdAt, error, files}]}`` — or,
with ``recursive: true``, ``messagesTree``: the same messages nested under ``children``. The root
parent is the all-zero id. ``content`` (agents) is a list of parts: ``text`` (a string or
``{value}``), ``think``, ``tool_call`` (``{id, name, args, output}``), ``image_file`` /
``image_url``. LibreChat exports no active branch: the newest leaf is used.
"""

from __future__ import annotations

from typing import Any

from ..model import ConversationError, SourceConversation, SourceMessage
from .common import (
    as_dict,
    as_id,
    compact,
    dumps,
    file_block,
    part_blocks,
    text,
    text_block,
    to_ms,
)

NAME = "librechat"
ROOT = "00000000-0000-0000-0000-000000000000"


def _part_text(v: Any) -> str:
    if isinstance(v, dict):
        return text(v.get("value"))
    return text(v)


def _tool_call(call: dict) -> list:
    cid, name = as_id(call.get("id")), text(call.get("name"))
    args = call.get("args", call.get("arguments", ""))
    out = [{"kind": "tool_call", "id": cid, "name": name, "arguments": dumps(args)}]
    if call.get("output") is not None:
        out.append({"kind": "tool_output", "id": cid, "name": name, "text": dumps(call["output"])})
    return out


def _part(c: dict, skipped) -> list:
    """One item of a message's ``content`` list."""
    kind = c.get("type")
    if kind == "text":
        return [text_block(_part_text(c.get("text")))]
    if kind == "think":
        t = _part_text(c.get("think"))
        return [{"kind": "thinking", "text": t} if t else None]
    if kind == "tool_call":
        return _tool_call(as_dict(c.get("tool_call")))
    if kind in ("image_file", "image_url"):
        ref = as_dict(c.get(kind))
        name = text(ref.get("file_id") or ref.get("url")) or "image"
        return [file_block(name=name, mime_type="image/*", ref=text(ref.get("file_id")))]
    if kind == "error":
        return [{"kind": "error", "text": _part_text(c.get("error") or c.get("text"))}]
    skipped[f"unsupported_content:{kind}"] += 1
    return []


def _blocks(m: dict, skipped) -> list[dict]:
    out = part_blocks(m, lambda c: _part(c, skipped))
    out.extend(
        file_block(
            name=text(f.get("filename")) or "file",
            mime_type=text(f.get("type")),
            size=f.get("bytes"),
            ref=as_id(f.get("file_id")),
            width=f.get("width"),
            height=f.get("height"),
        )
        for f in m.get("files") or ()
        if isinstance(f, dict)
    )
    return compact(out)


def _flatten(tree: list) -> list:
    out, stack = [], list(reversed(tree))
    while stack:
        m = stack.pop()
        if isinstance(m, dict):
            out.append(m)
            kids = m.get("children")
            if isinstance(kids, list):
                stack.extend(reversed(kids))
    return out


def parse(obj: Any, files: frozenset[str] = frozenset()) -> SourceConversation:
    if not isinstance(obj, dict):
        raise ConversationError("malformed", "a LibreChat conversation must be an object")
    raw = obj.get("messages")
    if not isinstance(raw, list):
        tree = obj.get("messagesTree")
        if not isinstance(tree, list):
            raise ConversationError(
                "malformed", "a LibreChat export needs 'messages' or 'messagesTree'"
            )
        raw = _flatten(tree)
    cid = as_id(obj.get("conversationId"))
    if not cid:
        raise ConversationError("malformed", "a LibreChat export needs a conversationId")
    options = as_dict(obj.get("options"))
    conv = SourceConversation(
        id=cid,
        title=text(obj.get("title")).strip(),
        messages=[],
        model=text(options.get("model")),
        created_at=to_ms(obj.get("createdAt")),
        updated_at=to_ms(obj.get("updatedAt")),
    )
    for m in raw:
        if not isinstance(m, dict):
            conv.skipped["malformed_message"] += 1
            continue
        parent = as_id(m.get("parentMessageId")) or None
        role = "user" if m.get("isCreatedByUser") is True else "assistant"
        msg = SourceMessage(
            as_id(m.get("messageId")),
            None if parent == ROOT else parent,
            role,
            _blocks(m, conv.skipped),
            to_ms(m.get("createdAt")),
            text(m.get("model")) or (conv.model if role == "assistant" else ""),
        )
        if m.get("error") is True:
            msg.status = "error"
        conv.messages.append(msg)
    if conv.created_at is None:
        dates = [m.created_at for m in conv.messages if m.created_at is not None]
        conv.created_at = min(dates) if dates else None
    return conv

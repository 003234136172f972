"""Claude's data export (``conversations.json``): one conversation object (pure).

Shape: ``{uuid, name, summary, created_at, updated_at, account, chat_messages: [{uuid, sender
("human" | "assistant"), text, content: [{type: text|thinking|tool_use|tool_result|image, …}],
attachments: [{file_name, file_size, file_type, extracted_content}], files: [{file_name,
file_uuid}], created_at, parent_message_uuid?}], current_leaf_message_uuid?}``; times are ISO 8601.

Older exports are linear (no parent ids): each message continues the one before it. Newer ones
carry ``parent_message_uuid`` (the all-zero root sentinel meaning none), which keeps edits and
retries as siblings; ``current_leaf_message_uuid``, when present, is the active leaf, else the last
message listed. ``content`` is preferred over ``text`` when it has blocks; attachments become
document references with their extracted text (Claude keeps the text, not the file).
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

NAME = "claude"
ROOT = "00000000-0000-4000-8000-000000000000"


def _tool_result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(
            text(c.get("text"))
            for c in content
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
    return dumps(content) if content is not None else ""


def _content_blocks(c: dict, skipped) -> list:
    """One item of a message's ``content`` list."""
    kind = c.get("type")
    if kind == "text":
        return [text_block(text(c.get("text")))] + [
            {"kind": "citation", "url": text(cite["url"]), "title": text(cite.get("title"))}
            for cite in c.get("citations") or ()
            if isinstance(cite, dict) and isinstance(cite.get("url"), str)
        ]
    if kind == "thinking":
        t = text(c.get("thinking")) or text(c.get("text"))
        return [{"kind": "thinking", "text": t} if t else None]
    if kind == "tool_use":
        args = dumps(c.get("input") if c.get("input") is not None else {})
        return [
            {
                "kind": "tool_call",
                "id": as_id(c.get("id")),
                "name": text(c.get("name")),
                "arguments": args,
            }
        ]
    if kind == "tool_result":
        b: dict[str, Any] = {
            "kind": "tool_output",
            "id": as_id(c.get("tool_use_id")),
            "name": text(c.get("name")),
            "text": _tool_result_text(c.get("content")),
        }
        if c.get("is_error") is True:
            b["is_error"] = True
        return [b]
    if kind in ("image", "document"):
        src = as_dict(c.get("source"))
        return [
            file_block(name=text(c.get("file_name")) or kind, mime_type=text(src.get("media_type")))
        ]
    skipped[f"unsupported_content:{kind}"] += 1
    return []


def _blocks(m: dict, skipped) -> list[dict]:
    out = part_blocks(m, lambda c: _content_blocks(c, skipped))
    out.extend(
        file_block(
            name=text(a.get("file_name")) or "attachment",
            mime_type=text(a.get("file_type")),
            size=a.get("file_size"),
            content=text(a.get("extracted_content")),
        )
        for a in m.get("attachments") or ()
        if isinstance(a, dict)
    )
    out.extend(
        file_block(name=text(f.get("file_name")) or "file", ref=as_id(f.get("file_uuid")))
        for f in m.get("files") or m.get("files_v2") or ()
        if isinstance(f, dict)
    )
    return compact(out)


def parse(obj: Any, files: frozenset[str] = frozenset()) -> SourceConversation:
    if not isinstance(obj, dict) or not isinstance(obj.get("chat_messages"), list):
        raise ConversationError("malformed", "a Claude conversation needs a 'chat_messages' list")
    cid = as_id(obj.get("uuid") or obj.get("id"))
    if not cid:
        raise ConversationError("malformed", "a Claude conversation needs a uuid")
    conv = SourceConversation(
        id=cid,
        title=text(obj.get("name") or obj.get("title")).strip(),
        messages=[],
        current_id=as_id(obj.get("current_leaf_message_uuid")) or None,
        created_at=to_ms(obj.get("created_at")),
        updated_at=to_ms(obj.get("updated_at")),
        model=text(obj.get("model")),
        starred=obj.get("is_starred") is True,
    )
    if isinstance(obj.get("summary"), str) and obj["summary"]:
        conv.metadata["summary"] = text(obj["summary"])
    prev: str | None = None
    for m in obj["chat_messages"]:
        if not isinstance(m, dict):
            conv.skipped["malformed_message"] += 1
            continue
        mid = as_id(m.get("uuid") or m.get("id"))
        if "parent_message_uuid" in m:
            parent = as_id(m.get("parent_message_uuid")) or None
            parent = None if parent == ROOT else parent
        else:
            parent = prev
        sender = text(m.get("sender"))
        role = "user" if sender in ("human", "user") else "assistant"
        msg = SourceMessage(mid, parent, role, _blocks(m, conv.skipped), to_ms(m.get("created_at")))
        if role == "assistant":
            msg.model = conv.model
        conv.messages.append(msg)
        prev = mid or prev
    if conv.current_id is None and prev:
        conv.current_id = prev
    return conv

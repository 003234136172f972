"""Open WebUI's chat export (JSON): one chat object (pure).

Shape: ``{id, title, chat: {title, models, history: {currentId, messages: {id: {id, parentId,
childrenIds, role, content, model, timestamp, files, error, output?}}}, messages: [...]},
created_at, updated_at, archived, pinned}`` — times in epoch seconds. The tree is ``parentId``
(``childrenIds`` is redundant); ``currentId`` is the active leaf. Older chats have only the linear
``chat.messages`` list.

Reasoning and tool steps are inlined into ``content`` as ``<details type="reasoning">`` /
``<details type="tool_calls">`` HTML; newer versions also keep the structured ``output`` list
(``reasoning``, ``function_call``, ``function_call_output``, ``message``), which is preferred.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..model import ConversationError, SourceConversation, SourceMessage
from .common import as_dict, as_id, compact, dumps, file_block, text, text_block, to_ms

NAME = "openwebui"
_DETAILS = re.compile(r'<details\s+type="(\w+)"[^>]*>(.*?)</details>', re.S)
_SUMMARY = re.compile(r"<summary>.*?</summary>", re.S)


def _output_text(parts: Any) -> str:
    if isinstance(parts, str):
        return text(parts)
    if isinstance(parts, list):
        return "".join(
            text(p.get("text"))
            for p in parts
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _from_output(output: list, skipped) -> list:
    out: list = []
    for o in output:
        if not isinstance(o, dict):
            continue
        kind = o.get("type")
        if kind == "reasoning":
            t = _output_text(o.get("content")) or _output_text(o.get("summary"))
            out.append({"kind": "thinking", "text": t} if t else None)
        elif kind == "function_call":
            out.append(
                {
                    "kind": "tool_call",
                    "id": as_id(o.get("call_id") or o.get("id")),
                    "name": text(o.get("name")),
                    "arguments": dumps(o.get("arguments", "")),
                }
            )
        elif kind == "function_call_output":
            out.append(
                {
                    "kind": "tool_output",
                    "id": as_id(o.get("call_id")),
                    "name": "",
                    "text": _output_text(o.get("output")),
                }
            )
        elif kind == "message":
            out.append(text_block(_output_text(o.get("content"))))
        else:
            skipped[f"unsupported_content:{kind}"] += 1
    return out


def _from_content(content: str) -> list:
    out: list = []
    pos = 0
    for m in _DETAILS.finditer(content):
        out.append(text_block(content[pos : m.start()].strip()))
        inner = html.unescape(_SUMMARY.sub("", m.group(2))).strip()
        if m.group(1) == "reasoning":
            inner = "\n".join(
                line[2:] if line.startswith("> ") else line for line in inner.splitlines()
            )
            out.append({"kind": "thinking", "text": inner} if inner else None)
        elif m.group(1) == "tool_calls":
            out.append(
                {"kind": "tool_output", "id": "", "name": "", "text": inner} if inner else None
            )
        else:
            out.append(text_block(inner))
        pos = m.end()
    out.append(text_block(content[pos:].strip()))
    return out


def _message(mid: str, parent: str | None, m: dict, skipped) -> SourceMessage:
    role = text(m.get("role")) or "assistant"
    content = text(m.get("content"))
    output = m.get("output")
    if isinstance(output, list) and output:
        blocks = _from_output(output, skipped)
    else:
        blocks = _from_content(content)
    for f in m.get("files") or ():
        if isinstance(f, dict):
            url = text(f.get("url"))
            inner = as_dict(f.get("file"))
            meta = as_dict(inner.get("meta"))
            mime = text(meta.get("content_type")) or ("image/*" if f.get("type") == "image" else "")
            blocks.append(
                file_block(
                    name=text(f.get("name")) or text(meta.get("name")) or "file",
                    mime_type=mime,
                    size=f.get("size") if isinstance(f.get("size"), int) else meta.get("size"),
                    ref="" if url.startswith("data:") else url or as_id(f.get("id")),
                    in_export=url.startswith("data:"),
                )
            )
    out = SourceMessage(mid, parent, role, [], to_ms(m.get("timestamp")), text(m.get("model")))
    err = m.get("error")
    if err:
        msg = text(err.get("content")) if isinstance(err, dict) else ""
        blocks.append({"kind": "error", "text": msg or "the model failed"})
        out.status = "error"
    if role == "system":
        out.skip = "system_message"
    out.blocks = compact(blocks)
    return out


def parse(obj: Any, files: frozenset[str] = frozenset()) -> SourceConversation:
    if not isinstance(obj, dict) or not isinstance(obj.get("chat"), dict):
        raise ConversationError("malformed", "an Open WebUI chat needs a 'chat' object")
    chat = obj["chat"]
    cid = as_id(obj.get("id") or chat.get("id"))
    if not cid:
        raise ConversationError("malformed", "an Open WebUI chat needs an id")
    models = chat.get("models") if isinstance(chat.get("models"), list) else []
    conv = SourceConversation(
        id=cid,
        title=text(obj.get("title") or chat.get("title")).strip(),
        messages=[],
        created_at=to_ms(obj.get("created_at") or chat.get("timestamp")),
        updated_at=to_ms(obj.get("updated_at")),
        model=text(models[0]) if models else "",
        archived=obj.get("archived") is True,
        pinned=obj.get("pinned") is True,
    )
    history = as_dict(chat.get("history"))
    msgs = history.get("messages")
    if isinstance(msgs, dict) and msgs:
        conv.current_id = as_id(history.get("currentId")) or None
        for key, m in msgs.items():
            if not isinstance(m, dict):
                conv.skipped["malformed_message"] += 1
                continue
            conv.messages.append(
                _message(
                    as_id(m.get("id") or key), as_id(m.get("parentId")) or None, m, conv.skipped
                )
            )
    elif isinstance(chat.get("messages"), list):
        prev = None
        for m in chat["messages"]:
            if not isinstance(m, dict):
                conv.skipped["malformed_message"] += 1
                continue
            mid = as_id(m.get("id")) or f"{cid}:{len(conv.messages)}"
            parent = as_id(m.get("parentId")) or prev if "parentId" in m else prev
            conv.messages.append(_message(mid, parent, m, conv.skipped))
            prev = mid
        conv.current_id = prev
    else:
        raise ConversationError("malformed", "an Open WebUI chat needs chat.history.messages")
    for m in conv.messages:
        if m.role == "assistant" and not m.model:
            m.model = conv.model
    return conv

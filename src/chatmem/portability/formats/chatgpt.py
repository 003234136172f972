"""ChatGPT "Export data" (``conversations.json``): one conversation object (pure).

Shape (as the export writes it): ``{id|conversation_id, title, create_time, update_time,
current_node, default_model_slug, is_archived, mapping: {node_id: {id, parent, children,
message}}}``; a message is ``{id, author: {role, name}, create_time, content: {content_type, …},
recipient, status, metadata: {model_slug, attachments, is_visually_hidden_from_conversation}}``.
Times are epoch seconds (floats).

Mapping to chatmem: the tree is the ``parent`` links (``children`` is redundant and ignored, so
the two disagreeing cannot hurt); ``current_node`` is the active leaf. The root
("client-created-root", no message), hidden system prompts, custom instructions and reasoning
recaps ("Thought for 8s") are skipped with their reason; an assistant step addressed to a tool
(``recipient`` ≠ "all") is a ``tool_call``, a ``tool`` message a ``tool_output``, and every such
step — with the thoughts and the answer after it — folds into one assistant message per turn (see
``tree.py``). Images and files are references (``file-service://…``), noted as present in the
archive when the zip holds a file with their id.
"""

from __future__ import annotations

from typing import Any

from ..model import ConversationError, SourceConversation, SourceMessage
from .common import as_dict, as_id, compact, file_block, text, text_block, to_ms

NAME = "chatgpt"


def _asset_id(pointer: str) -> str:
    # file-service://file-AbC123 or sediment://file_00000000abc
    return pointer.split("://", 1)[-1]


def _in_archive(file_id: str, files: frozenset[str]) -> bool:
    return bool(file_id) and any(file_id in f for f in files)


def _part_blocks(parts: Any, attachments: dict, files: frozenset[str], warn) -> list:
    out: list = []
    for p in parts if isinstance(parts, list) else ():
        if isinstance(p, str):
            out.append(text_block(text(p)))
        elif isinstance(p, dict):
            ct = p.get("content_type")
            if ct == "image_asset_pointer":
                fid = _asset_id(text(p.get("asset_pointer")))
                att = attachments.pop(fid, {})
                out.append(
                    file_block(
                        name=text(att.get("name")) or fid or "image",
                        mime_type=text(att.get("mime_type") or att.get("mimeType")) or "image/*",
                        size=p.get("size_bytes"),
                        ref=fid,
                        in_export=_in_archive(fid, files),
                        width=p.get("width"),
                        height=p.get("height"),
                    )
                )
            elif ct == "audio_transcription":
                out.append(text_block(text(p.get("text"))))
            elif ct in ("audio_asset_pointer", "real_time_user_audio_video_asset_pointer"):
                fid = _asset_id(text(p.get("asset_pointer")))
                out.append(
                    file_block(
                        name=fid or "audio",
                        mime_type="audio/" + text(p.get("format") or "wav"),
                        size=p.get("size_bytes"),
                        ref=fid,
                        in_export=_in_archive(fid, files),
                    )
                )
            elif isinstance(p.get("text"), str):
                out.append(text_block(text(p["text"])))
            else:
                warn(f"part:{ct}")
    return out


def _content_text(content: dict) -> str:
    if isinstance(content.get("text"), str):
        return text(content["text"])
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n\n".join(text(p) for p in parts if isinstance(p, str))
    if isinstance(content.get("result"), str):
        return text(content["result"])
    return ""


def _skip_reason(role: str, ct: str, meta: dict) -> str | None:
    if meta.get("is_visually_hidden_from_conversation"):
        return "hidden"
    if ct == "user_editable_context" or meta.get("is_user_system_message"):
        return "custom_instructions"
    if role == "system":
        return "system_message"
    if ct == "reasoning_recap":
        return "reasoning_recap"
    return None


def _tool_blocks(ct: str, content: dict, name: str, call_id: str, ctx: dict, warn) -> list:
    """A ``tool`` message: a quote (citation), generated images, or the tool's output."""
    if ct == "tether_quote":
        cite = {
            "kind": "citation",
            "title": text(content.get("title")),
            "text": text(content.get("text")),
        }
        if isinstance(content.get("url"), str):
            cite["url"] = text(content["url"])
        return [cite]
    if ct == "multimodal_text":  # e.g. generated images
        return compact(_part_blocks(content.get("parts"), {}, ctx["files"], warn))
    body = _content_text(content)
    return [{"kind": "tool_output", "id": call_id, "name": name, "text": body}] if body else []


def _thoughts(content: dict) -> list:
    parts = []
    for th in content.get("thoughts") or ():
        if isinstance(th, dict):
            head, body = text(th.get("summary")), text(th.get("content"))
            parts.append(f"{head}\n{body}".strip() if head else body)
    joined = "\n\n".join(p for p in parts if p)
    return [{"kind": "thinking", "text": joined}] if joined else []


def _visible_blocks(ct: str, content: dict, attachments: dict, ctx: dict, warn) -> list:
    """A user or assistant message's own content, by content type."""
    if ct in ("text", "multimodal_text"):
        return _part_blocks(content.get("parts"), attachments, ctx["files"], warn)
    if ct == "code":
        lang = text(content.get("language")) or ""
        code = text(content.get("text"))
        return [text_block(f"```{'' if lang == 'unknown' else lang}\n{code}\n```" if code else "")]
    if ct == "thoughts":
        return _thoughts(content)
    if ct == "system_error":
        return [{"kind": "error", "text": text(content.get("text")) or text(content.get("name"))}]
    if ct == "execution_output":
        return [{"kind": "tool_output", "id": "", "name": "python", "text": _content_text(content)}]
    body = _content_text(content)
    if not body:
        warn(ct)
    return [text_block(body)]


def _message(node_id: str, parent: str | None, msg: dict, ctx: dict) -> SourceMessage:
    author = as_dict(msg.get("author"))
    role = text(author.get("role")) or "assistant"
    content = as_dict(msg.get("content"))
    ct = text(content.get("content_type")) or "text"
    meta = as_dict(msg.get("metadata"))
    out = SourceMessage(node_id, parent, role, [], to_ms(msg.get("create_time")))
    out.model = text(meta.get("model_slug"))

    def warn(what: str) -> None:
        ctx["skipped"][f"unsupported_content:{what}"] += 1

    out.skip = _skip_reason(role, ct, meta)
    if out.skip:
        return out
    recipient = text(msg.get("recipient")) or "all"
    if role == "assistant" and recipient != "all":  # a call addressed to a tool
        args = _content_text(content)
        out.blocks = [{"kind": "tool_call", "id": node_id, "name": recipient, "arguments": args}]
        out.fold = True
        return out
    if role == "tool":
        name = text(author.get("name")) or "tool"
        out.blocks = _tool_blocks(ct, content, name, parent or "", ctx, warn)
        out.role, out.fold = "assistant", True
        return out
    attachments = {
        text(a.get("id")): a for a in meta.get("attachments") or () if isinstance(a, dict)
    }
    blocks = _visible_blocks(ct, content, attachments, ctx, warn)
    if ct == "system_error":
        out.status = "error"
    blocks.extend(  # uploads the parts did not already show
        file_block(
            name=text(att.get("name")) or fid,
            mime_type=text(att.get("mime_type") or att.get("mimeType")),
            size=att.get("size"),
            ref=fid,
            in_export=_in_archive(fid, ctx["files"]),
        )
        for fid, att in attachments.items()
    )
    out.blocks = compact(blocks)
    return out


def parse(obj: Any, files: frozenset[str] = frozenset()) -> SourceConversation:
    if not isinstance(obj, dict) or not isinstance(obj.get("mapping"), dict):
        raise ConversationError("malformed", "a ChatGPT conversation needs a 'mapping' object")
    cid = as_id(obj.get("conversation_id") or obj.get("id"))
    if not cid:
        raise ConversationError("malformed", "a ChatGPT conversation needs an id")
    conv = SourceConversation(
        id=cid,
        title=text(obj.get("title")).strip(),
        messages=[],
        current_id=as_id(obj.get("current_node")) or None,
        created_at=to_ms(obj.get("create_time")),
        updated_at=to_ms(obj.get("update_time")),
        model=text(obj.get("default_model_slug")),
        archived=obj.get("is_archived") is True,
        starred=obj.get("is_starred") is True,
    )
    ctx = {"skipped": conv.skipped, "files": files}
    mapping = obj["mapping"]
    roles: dict[str, Any] = {}
    for key, node in mapping.items():
        if isinstance(node, dict) and isinstance(node.get("message"), dict):
            a = node["message"].get("author")
            roles[as_id(node.get("id") or key)] = a.get("role") if isinstance(a, dict) else None
    for key, node in mapping.items():
        if not isinstance(node, dict):
            conv.skipped["malformed_node"] += 1
            continue
        nid = as_id(node.get("id") or key)
        parent = as_id(node.get("parent")) or None
        msg = node.get("message")
        if not isinstance(msg, dict):
            conv.messages.append(SourceMessage(nid, parent, "system", [], skip="empty"))
            continue
        m = _message(nid, parent, msg, ctx)
        if m.role in ("assistant", "tool") and roles.get(parent or "") in ("assistant", "tool"):
            m.fold = True
        if not m.model and m.role == "assistant":
            m.model = conv.model
        conv.messages.append(m)
    return conv

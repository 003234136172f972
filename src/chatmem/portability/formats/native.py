"""chatmem's own export format (``format: "chatmem"``): one conversation object (pure).

What ``render.conversation_doc`` writes: ``{id, title, created_at, updated_at, model_id, pinned,
starred, archived, active_leaf_id, messages: [{id, parent_id, role, blocks, created_at,
model_id, status, metadata}]}`` — the whole tree, so export → import gives the same tree (ids are
new; the originals are kept as provenance).
"""

from __future__ import annotations

from typing import Any

from ...conversations import blocks as blk
from ..model import ConversationError, SourceConversation, SourceMessage
from .common import as_id, text, to_ms

NAME = "chatmem"
VERSION = 1


def parse(obj: Any, files: frozenset[str] = frozenset()) -> SourceConversation:
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise ConversationError("malformed", "a chatmem conversation needs a 'messages' list")
    cid = as_id(obj.get("id"))
    if not cid:
        raise ConversationError("malformed", "a chatmem conversation needs an id")
    conv = SourceConversation(
        id=cid,
        title=text(obj.get("title")).strip(),
        messages=[],
        current_id=as_id(obj.get("active_leaf_id")) or None,
        created_at=to_ms(obj.get("created_at")),
        updated_at=to_ms(obj.get("updated_at")),
        model=text(obj.get("model_id")),
        archived=obj.get("archived") is True,
        pinned=obj.get("pinned") is True,
        starred=obj.get("starred") is True,
    )
    for m in obj["messages"]:
        if not isinstance(m, dict):
            conv.skipped["malformed_message"] += 1
            continue
        role = m.get("role")
        try:
            blocks = blk.normalize(m.get("blocks"))
        except blk.BlockError:
            blocks = []
        msg = SourceMessage(
            as_id(m.get("id")),
            as_id(m.get("parent_id")) or None,
            role if role in ("user", "assistant") else "assistant",
            blocks,
            to_ms(m.get("created_at")),
            text(m.get("model_id")),
            status="error" if m.get("status") == "error" else "complete",
        )
        meta = m.get("metadata")
        if isinstance(meta, dict):  # the caller's metadata travels; provenance is set anew
            msg.metadata = {k: v for k, v in meta.items() if k != "import"}
        if role not in ("user", "assistant"):
            msg.skip = "unknown_role"
        conv.messages.append(msg)
    return conv

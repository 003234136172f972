"""The export formats chatmem reads: name → parser (each ``parse(obj, files)`` is pure)."""

from __future__ import annotations

from . import chatgpt, claude, librechat, native, openwebui

PARSERS = {
    chatgpt.NAME: chatgpt.parse,
    claude.NAME: claude.parse,
    openwebui.NAME: openwebui.parse,
    librechat.NAME: librechat.parse,
    native.NAME: native.parse,
}
NAMES = tuple(PARSERS)


def detect(
    top: str, keys: set[str], inner: set[str], format_value: str | None
) -> tuple[str, str] | None:
    """(format, ijson item prefix) from the first keys of a document (pure).

    ``top`` is "array" or "map"; ``keys`` the keys of the first item (array) or of the document
    (map); ``inner`` the keys of the first ``conversations`` item when the document is a map with
    one; ``format_value`` the document's ``format`` string, if any."""
    if top == "map":
        if format_value == native.NAME:
            return native.NAME, "conversations.item"
        if "conversations" in keys and inner:
            found = _by_keys(inner)
            if found:
                return found, "conversations.item"
        found = _by_keys(keys)
        if found in (librechat.NAME, openwebui.NAME, claude.NAME, chatgpt.NAME):
            return found, ""
        return None
    found = _by_keys(keys)
    return (found, "item") if found else None


def _by_keys(keys: set[str]) -> str | None:
    if "mapping" in keys:
        return chatgpt.NAME
    if "chat_messages" in keys:
        return claude.NAME
    if "chat" in keys:
        return openwebui.NAME
    if "conversationId" in keys or "messagesTree" in keys:
        return librechat.NAME
    if "messages" in keys and "active_leaf_id" in keys:
        return native.NAME
    return None

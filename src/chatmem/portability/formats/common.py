"""Helpers the format parsers share (pure): dates, text, attachment references."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ...unicode import scrub

#: earliest and latest dates an import accepts (1990 … 2200); anything else is treated as absent
_MIN_MS, _MAX_MS = 631_152_000_000, 7_258_118_400_000


def to_ms(value: Any) -> int | None:
    """Epoch seconds (int/float, ChatGPT and Open WebUI), milliseconds, or an ISO 8601 string
    (Claude, LibreChat) → epoch milliseconds; None when absent or not a plausible date."""
    if value is None or isinstance(value, bool):
        return None
    ms: float | None = None
    if isinstance(value, (int, float)):
        ms = float(value)
        if ms < 1e11:  # seconds (until the year 5138)
            ms *= 1000
        elif ms > 1e14:  # microseconds or nanoseconds
            while ms > 1e14:
                ms /= 1000
    elif isinstance(value, str) and value.strip():
        s = value.strip()
        try:
            return to_ms(float(s))
        except ValueError:
            pass
        try:
            d = datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            return None
        if d.tzinfo is None:
            d = d.replace(tzinfo=UTC)
        ms = d.timestamp() * 1000
    if ms is None or not (_MIN_MS <= ms <= _MAX_MS):
        return None
    return int(ms)


def as_dict(value: Any) -> dict:
    """``value`` when it is an object, else an empty one (exports omit and mistype freely)."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    """A storable string (NUL and lone surrogates replaced); non-strings become ''."""
    return scrub(value) if isinstance(value, str) else ""


def as_id(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    return text(value).strip()


def dumps(value: Any) -> str:
    """Tool arguments and outputs as text (they are shown, not executed)."""
    if isinstance(value, str):
        return text(value)
    return text(json.dumps(value, ensure_ascii=False, default=str))


def text_block(s: str) -> dict | None:
    return {"kind": "text", "text": s} if s else None


def file_block(
    *,
    name: str,
    mime_type: str = "",
    size: int | None = None,
    ref: str = "",
    content: str = "",
    in_export: bool = False,
    width: int | None = None,
    height: int | None = None,
) -> dict:
    """An image or a document as a reference. Its bytes are never stored by the import: the note
    says whether they were in the export (kept there) or not (only the reference survived)."""
    kind = (
        "image"
        if mime_type.startswith("image/") or (not mime_type and _looks_image(name))
        else "document"
    )
    b: dict[str, Any] = {"kind": kind, "name": text(name) or "file"}
    if mime_type:
        b["mime_type"] = text(mime_type)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        b["size"] = size
    if ref:
        b["source_ref"] = text(ref)
    if isinstance(width, int) and isinstance(height, int):
        b["width"], b["height"] = width, height
    if content:
        b["text"] = text(content)
    b["note"] = (
        "file included in the original export archive; its bytes were not imported"
        if in_export
        else "the export holds only a reference to this file; its bytes were not in it"
    )
    return b


def _looks_image(name: str) -> bool:
    return name.lower().rsplit(".", 1)[-1] in ("png", "jpg", "jpeg", "gif", "webp", "bmp", "svg")


def compact(blocks: list[dict | None]) -> list[dict]:
    """Drop absent blocks and merge adjacent text blocks."""
    out: list[dict] = []
    for b in blocks:
        if not b:
            continue
        if b["kind"] == "text" and out and out[-1]["kind"] == "text" and len(out[-1]) == 2:
            out[-1] = {"kind": "text", "text": out[-1]["text"] + "\n\n" + b["text"]}
        else:
            out.append(b)
    return out


def part_blocks(m: dict, part: Callable[[dict], list[dict | None]]) -> list[dict | None]:
    """A message's ``content`` list, each part through ``part`` (the format's own mapping);
    when there is no such list, its plain ``text`` — the shape Claude and LibreChat share."""
    content = m.get("content")
    if isinstance(content, list) and content:
        return [b for c in content if isinstance(c, dict) for b in part(c)]
    return [text_block(text(m.get("text")))]

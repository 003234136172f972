"""A conversation as chatmem JSON (the whole tree), Markdown (the active path) and a printable
HTML page (pure: mappings in, text out).

The JSON document is what ``formats/native.py`` reads back, so export → import rebuilds the same
tree. Markdown and HTML show what a reader sees on the active path: text, thinking (folded),
tool calls and outputs as code, citations as links, files as named references. HTML is one
self-contained page — inline print styles, no script, Markdown rendered by markdown-it with raw
HTML disabled (message text can never inject markup) — served with its own strict CSP.
"""

from __future__ import annotations

import html as htmllib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from markdown_it import MarkdownIt

FORMAT = "chatmem"
VERSION = 1

CONVERSATION_KEYS = (
    "id",
    "title",
    "created_at",
    "updated_at",
    "model_id",
    "project_id",
    "agent_id",
    "active_leaf_id",
    "message_count",
    "last_message_at",
    "summary",
)
MESSAGE_KEYS = (
    "id",
    "parent_id",
    "role",
    "blocks",
    "created_at",
    "model_id",
    "model_label",
    "status",
    "stop_reason",
    "error",
    "attachments",
    "citations",
    "feedback",
    "metadata",
)
FLAGS = ("pinned", "starred", "archived")
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"


def conversation_doc(conv: Mapping[str, Any], messages: Iterable[Mapping[str, Any]]) -> dict:
    out = {k: conv.get(k) for k in CONVERSATION_KEYS}
    for k in FLAGS:
        out[k] = bool(conv.get(k))
    out["messages"] = [{k: m.get(k) for k in MESSAGE_KEYS} for m in messages]
    return out


def document(conversations: list[dict], exported_at: int, **extra) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at,
        **extra,
        "conversations": conversations,
    }


def active_path(doc: Mapping[str, Any]) -> list[dict]:
    """The messages from the root to the active leaf (the newest leaf when it is unset)."""
    by_id = {m["id"]: m for m in doc["messages"]}
    leaf = doc.get("active_leaf_id")
    if leaf not in by_id:
        parents = {m["parent_id"] for m in doc["messages"]}
        leaves = [m for m in doc["messages"] if m["id"] not in parents]
        if not leaves:
            return []
        leaf = max(leaves, key=lambda m: (m["created_at"] or 0, m["id"]))["id"]
    path, seen = [], set()
    while leaf in by_id and leaf not in seen:
        seen.add(leaf)
        path.append(by_id[leaf])
        leaf = by_id[leaf]["parent_id"]
    return path[::-1]


def when(ms: int | None) -> str:
    if not ms:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _speaker(m: Mapping[str, Any]) -> str:
    if m["role"] == "user":
        return "You"
    return m.get("model_label") or m.get("model_id") or "Assistant"


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _file_line(b: Mapping[str, Any]) -> str:
    name = b.get("name") or b.get("title") or b.get("url") or b["kind"]
    note = f" — {b['note']}" if b.get("note") else ""
    return f"📎 {name}{note}"


def block_markdown(b: Mapping[str, Any]) -> str:
    kind = b.get("kind")
    if kind == "text":
        return b.get("text", "")
    if kind == "thinking":
        quoted = "\n".join("> " + line for line in (b.get("text") or "").splitlines())
        return "> **Thinking**\n>\n" + quoted
    if kind == "tool_call":
        return f"**Tool call** `{b.get('name', '')}`\n\n" + _fence(
            str(b.get("arguments", "")), "json"
        )
    if kind == "tool_output":
        return f"**Tool output** `{b.get('name', '')}`\n\n" + _fence(str(b.get("text", "")))
    if kind == "citation":
        title = b.get("title") or b.get("url") or "source"
        return f"[{title}]({b['url']})" if b.get("url") else f"> {title}: {b.get('text', '')}"
    if kind in ("image", "document"):
        line = _file_line(b)
        return line + ("\n\n" + _fence(b["text"]) if b.get("text") else "")
    if kind in ("artifact", "research"):
        head = f"**{b.get('title') or kind.title()}**"
        return head + "\n\n" + (b.get("text") or "")
    if kind == "error":
        return f"> ⚠ {b.get('text') or b.get('message') or 'error'}"
    return ""


def markdown(doc: Mapping[str, Any]) -> str:
    lines = [f"# {doc.get('title') or 'Conversation'}", ""]
    meta = [f"Created {when(doc.get('created_at'))}"] if doc.get("created_at") else []
    if doc.get("model_id"):
        meta.append(f"model {doc['model_id']}")
    if meta:
        lines += ["_" + " · ".join(meta) + "_", ""]
    for m in active_path(doc):
        lines += [f"## {_speaker(m)} · {when(m.get('created_at'))}", ""]
        for b in m.get("blocks") or ():
            part = block_markdown(b)
            if part:
                lines += [part, ""]
    return "\n".join(lines).rstrip() + "\n"


_STYLE = """
body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:46rem;margin:2rem auto;
padding:0 1rem;color:#1d1d1f}
h1{font-size:1.6rem;margin-bottom:.2rem}.meta{color:#666;margin-top:0}
article{border-top:1px solid #ddd;padding:.6rem 0;break-inside:avoid-page}
article.user{background:#f6f6f8;padding:.6rem .8rem;border-radius:6px;border:0;margin:.8rem 0}
header{font-weight:600;font-size:.85rem;color:#444}header time{font-weight:400;color:#777}
pre{background:#f3f3f3;padding:.6rem;overflow-x:auto;white-space:pre-wrap;border-radius:4px}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
blockquote{border-left:3px solid #ccc;margin:0;padding-left:.8rem;color:#555}
.file{color:#555}.error{color:#a00}
@media print{body{margin:0;max-width:none}a{color:inherit}}
"""


def _md_renderer():
    # "commonmark" with raw HTML off: message text is rendered, never trusted as markup
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def html_page(doc: Mapping[str, Any]) -> str:
    md = _md_renderer()
    e = htmllib.escape
    title = doc.get("title") or "Conversation"
    parts = [
        "<!doctype html>",
        '<html><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
    ]
    meta = " · ".join(x for x in (when(doc.get("created_at")), doc.get("model_id") or "") if x)
    if meta:
        parts.append(f'<p class="meta">{e(meta)}</p>')
    for m in active_path(doc):
        parts.append(f'<article class="{e(m["role"])}"><header>{e(_speaker(m))} ')
        parts.append(f"<time>{e(when(m.get('created_at')))}</time></header>")
        for b in m.get("blocks") or ():
            kind = b.get("kind")
            if kind == "text":
                parts.append(md.render(b.get("text") or ""))
            elif kind in ("image", "document"):
                parts.append(f'<p class="file">{e(_file_line(b))}</p>')
            elif kind == "error":
                parts.append(f'<p class="error">{e(b.get("text") or "error")}</p>')
            elif kind == "citation" and b.get("url", "").startswith(("http://", "https://")):
                label = b.get("title") or b["url"]
                parts.append(f'<p><a href="{e(b["url"])}">{e(label)}</a></p>')
            else:
                rendered = block_markdown(b)
                if rendered:
                    parts.append(md.render(rendered))
        parts.append("</article>")
    parts.append("</body></html>")
    return "\n".join(parts)

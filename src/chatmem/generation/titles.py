"""The ``title`` job: name a conversation after its first turn.

With a real model configured the default model writes a short title; with only the demo provider
(or when the model call fails) the title is the first words of the first user message. A title the
user already set is never overwritten (compare-and-set on the default title).
"""

from __future__ import annotations

import logging

from .. import i18n
from ..conversations import blocks as blk
from ..db.clock import now_ms
from ..providers.base import ChatMessage, complete
from . import store

log = logging.getLogger("chatmem.generation.titles")
DEFAULT_TITLES = ("", *i18n.DEFAULT_TITLES.values())
PROMPT = (
    "Write a title of at most six words for a conversation that starts with the message "
    "below. Answer with the title only, no quotes.\n\n{text}"
)


def words_title(text: str, n_words: int = 8, max_chars: int = 60) -> str:
    """The first words of a message, on one line, clipped (pure)."""
    words = text.split()
    out = " ".join(words[:n_words])
    if len(out) > max_chars:
        out = out[: max_chars - 1].rstrip() + "…"
    elif len(words) > n_words:
        out += "…"
    return out


def clean_model_title(text: str) -> str:
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    return line.strip().strip("\"“”'").rstrip(".")[:80]


async def title_job(rt, payload: dict) -> None:
    cid = payload["conversation_id"]
    async with rt.db.read() as c:
        conv = await store.title_of(c, cid)
        if conv is None or conv.title not in DEFAULT_TITLES:
            return
        first = await store.first_user_blocks(c, cid)
    text = blk.visible_text(first.blocks) if first else ""
    if not text.strip():
        return
    title = ""
    reg = rt.providers
    if reg.has_real_model():
        model = reg.resolve(None)
        try:
            title = clean_model_title(
                await complete(
                    reg.provider(model.provider),
                    model,
                    [ChatMessage("user", PROMPT.format(text=text[:2000]))],
                    max_tokens=24,
                )
            )
        except Exception:
            log.exception("title by model failed for %s; using the first words", cid)
    title = title or words_title(text, rt.settings.title_words)
    async with rt.db.write() as c:
        await store.set_title_if_default(c, cid, title, DEFAULT_TITLES, now_ms())

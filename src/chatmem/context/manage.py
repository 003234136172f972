"""Context use-cases behind the routes and the job queue: preview, stored reports, compaction.

- ``preview`` — the context the next turn would get (``GET …/context``): the same
  ``build_turn_context`` a turn runs, on the active leaf, never compacting;
- ``stored_report`` — the report saved with an assistant message (``?message_id=``);
- ``compact_now`` — ``POST …/compact``: summarise everything but the latest round, under the lease
  (409 while another compaction holds it or a turn streams);
- the ``compaction`` job handler — the after-turn check, compacting only when a trigger fires.
"""

from __future__ import annotations

import time

from pydantic import ValidationError

from ..auth.models import Principal
from ..conversations import store
from ..errors import NotFound
from . import compaction as cp
from . import store as cstore
from .service import build_turn_context, resolve_model, resolve_summarizer, warm_query
from .wire import ContextReport


def blocks_out(blocks: list[dict]) -> list[dict]:
    keys = (
        "id",
        "level",
        "from_message_id",
        "anchor_message_id",
        "text",
        "tokens",
        "media",
        "message_count",
        "created_at",
    )
    return [{k: b.get(k) for k in keys} for b in blocks]


async def preview(rt, p: Principal, cid: str, *, include_messages: bool = False) -> dict:
    async with rt.db.read() as c:
        leaf = (await store.get_conversation(c, p.id, cid)).active_leaf_id
    await warm_query(rt, user_id=p.id, conversation_id=cid, message_id=leaf)
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, p.id, cid)
        model = resolve_model(rt, conv.model_id)
        ctx = await build_turn_context(
            c,
            settings=rt.settings,
            conv=conv,
            parent_id=conv.active_leaf_id,
            model=model,
            principal=p,
            rt=rt,
        )
    out = {
        "conversation_id": cid,
        "leaf_id": conv.active_leaf_id,
        "model": model.id,
        "preview": True,
        "report": ctx.report,
    }
    if include_messages:
        out["messages"] = [{"role": m.role, "content": m.content} for m in ctx.messages]
    return out


async def stored_report(rt, p: Principal, cid: str, mid: str) -> dict:
    async with rt.db.read() as c:
        await store.get_conversation(c, p.id, cid)
        row = await store.get_message(c, cid, mid)
    report = _report_in((row.metadata or {}).get("context"))
    if report is None:
        raise NotFound("no context report is stored for this message", code="no_context_report")
    return {"conversation_id": cid, "message_id": mid, "preview": False, "report": report}


def _report_in(stored) -> dict | None:
    """The report a turn stored in ``metadata["context"]``, or None. A log-mode append's metadata
    is the caller's, and a ``context`` key of its own that is not a report (a string, a list, no
    ``sections`` list — every report has one —, a field of the wrong type) is no report here:
    it was a 500. The web app's ``reportOf`` reads it the same way."""
    if not isinstance(stored, dict) or "sections" not in stored:
        return None
    try:
        ContextReport.model_validate(stored)
    except ValidationError:
        return None
    return stored


async def compact_now(rt, p: Principal, cid: str) -> dict:
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, p.id, cid)
    model = resolve_model(rt, conv.model_id)
    t0 = time.monotonic()
    res = await cp.compact(
        rt.db,
        conversation_id=cid,
        user_id=p.id,
        settings=rt.settings,
        model=model,
        summarizer=resolve_summarizer(rt, model),
        manual=True,
    )
    if res.compacted:
        rt.telemetry.compaction("manual", time.monotonic() - t0)
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, p.id, cid)
    return {
        **res.public(),
        "compacted": res.compacted,
        "summary_blocks": blocks_out(res.chain),
        "summary": conv.summary,
    }


async def compaction_job(rt, payload: dict) -> None:
    """After a turn: compact the conversation's active path if a trigger fires."""
    cid = str(payload.get("conversation_id") or "")
    async with rt.db.read() as c:
        conv = await cstore.conversation_for_job(c, cid)
    if conv is None:  # deleted since: nothing to do
        return
    model = resolve_model(rt, conv.model_id)
    t0 = time.monotonic()
    res = await cp.compact(
        rt.db,
        conversation_id=cid,
        user_id=conv.user_id,
        settings=rt.settings,
        model=model,
        summarizer=resolve_summarizer(rt, model),
    )
    if res.compacted:
        rt.telemetry.compaction("job", time.monotonic() - t0)

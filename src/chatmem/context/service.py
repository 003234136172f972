"""Gather what a turn's context needs from the database and call the pure assembler.

``build_turn_context(c, *, settings, conv, parent_id, model, principal, rt=None)`` is the one entry
point the generation service uses, inside its read transaction ``c``, before each model call. It
reads the unsummarised tail of the path ending at ``parent_id`` (the newest turn), the applicable
summary chain, the agent persona / project instructions / inline quote, and the memories section
(``rt.memory_source`` when the composition root wired one), and returns
``TurnContext(messages, report)``. Save ``report`` as the assistant message's
``metadata["context"]``; ``GET /api/conversations/{id}/context`` serves the same report.

Compaction, two ways:
- **inline** — when the backlog is too large for the window (see ``summary.decide``), the turn calls
  ``ensure_compacted(rt, …)`` *before* opening its read transaction (the summary is a model call;
  no connection is held across it), then builds the context on the new blocks and records the
  result in ``report["compaction"]`` (``ran: True``); ``compaction_event(report)`` gives the
  payload of the SSE ``compaction`` event (None when nothing ran). ``build_turn_context`` itself
  never compacts; its report says whether compaction was needed.
- **after the turn** — enqueue ``compaction`` {"conversation_id"} with dedupe key
  ``compact:<cid>`` (``enqueue_compaction`` does exactly that); the job compacts only when a
  trigger fires.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from ..agents import store as agents_store
from ..conversations import blocks as blk
from ..conversations import store
from ..cpu import run_text
from ..db.clock import now_ms
from ..embeddings import cached_query, embed_query, vector_search
from ..embeddings import service as embeddings_service
from ..jobs.queue import Job, enqueue
from ..projects import store as projects_store
from ..providers.base import ChatMessage, ModelInfo
from . import assemble as asm
from . import compaction as cp
from . import gather
from . import recall as rc
from . import recall_source as rs
from . import summary as sm
from .tokens import MESSAGE_OVERHEAD, counter_for

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
#: Seed 000: the fallback default prompt and the three fixed style lines of agent conversations.
AGENT_FALLBACK_PROMPT = "你是用户在 AI Agent 网页控制台中的陪伴助手。"
AGENT_STYLE_LINES = (
    "请用简洁、自然的中文回复。",
    "当用户请你起草内容时，直接给出可以发送的文本。",
    "尊重用户设定的边界，不操控，不使用制造焦虑的措辞。",
)
MEMORY_HEADER = "Long-term memories about the user (most important first):"
AGENT_MEMORY_HEADER = "以下是用户与该 Agent 的长期记忆，请优先尊重："


@dataclass
class TurnContext:
    messages: list[ChatMessage]
    report: dict = field(default_factory=dict)


def budgets_for(settings, model: ModelInfo) -> tuple[cp.Policy, asm.Budgets]:
    pol = cp.policy_for(settings, model)
    return pol, asm.Budgets(
        window=pol.window,
        reserved_output=pol.reserved_output,
        memory_tokens=int(settings.memory_budget_tokens),
        # the chain's text is kept within merge_budget; leave room for its <summary> framing
        summary_tokens=int(pol.merge_budget * 1.25) + 32,
        recall_tokens=min(int(pol.limit * settings.recall_share), int(settings.recall_max_tokens)),
        recall_item_tokens=int(settings.recall_item_tokens),
    )


def persona_card(agent) -> str:
    """The agent's persona card (seed 000's message 2), from the agents table."""
    rows = [
        ("名字", f"{agent.name}（@{agent.handle}）" if agent.handle else agent.name),
        ("简介", agent.headline),
        ("描述", agent.description),
        ("背景故事", agent.story_background),
        ("性格", agent.personality_prompt),
        ("语气", agent.tone_prompt),
        ("边界", agent.guardrails_prompt),
    ]
    lines = [f"{k}：{v.strip()}" for k, v in rows if v and v.strip()]
    return "角色卡\n" + "\n".join(lines) if lines else ""


async def _static_sections(c: AsyncConnection, settings, conv) -> dict:
    out: dict = {
        "system": settings.system_prompt or DEFAULT_SYSTEM_PROMPT,
        "style": (),
        "project": "",
        "persona": "",
        "agent_mode": False,
        "inline": None,
    }
    if conv.agent_id:
        agent = await agents_store.persona(c, conv.agent_id)
        if agent is not None:
            out.update(
                system=agent.default_prompt.strip() or AGENT_FALLBACK_PROMPT,
                style=AGENT_STYLE_LINES,
                persona=persona_card(agent),
                agent_mode=True,
            )
    if conv.project_id:
        out["project"] = await projects_store.instructions(c, conv)
    if conv.inline_source_conv and conv.inline_parent_id:
        anchor = await store.inline_anchor(
            c, conv.user_id, conv.inline_source_conv, conv.inline_parent_id
        )
        out["inline"] = asm.InlineQuote(
            quote=conv.inline_quote or "",
            anchor_id=conv.inline_parent_id,
            anchor_role=anchor.role if anchor else "assistant",
            anchor_text=blk.visible_text(anchor.blocks) if anchor else "",
        )
    return out


async def _memories(c, rt, principal, conv, query: str, budget: int, count, agent_mode: bool):
    source = rt.memory_source if rt is not None else None
    if source is None or budget <= 0:
        return asm.MemorySection(), None
    try:
        got = await source(
            c, principal=principal, conv=conv, query=query, budget_tokens=budget, count_tokens=count
        )
    except Exception as e:  # memory must never break a turn
        log.exception("memory source failed")
        return asm.MemorySection(), f"{type(e).__name__}: {e}"
    if not got or not got.get("lines"):
        return asm.MemorySection(), None
    header = got.get("header") or (AGENT_MEMORY_HEADER if agent_mode else MEMORY_HEADER)
    lines = tuple(got["lines"])
    ids = tuple(got.get("ids") or ())
    ids = ids + ("",) * (len(lines) - len(ids))
    return asm.MemorySection(header, lines, ids[: len(lines)]), None


async def _recall(c, rt, settings, conv, parent_id, history, tail, budgets, count) -> rs.Found:
    """Recall candidates, unless recall is off or the whole path surely fits verbatim."""
    if rt is None or not settings.recall_enabled or not parent_id or budgets.recall_tokens <= 0:
        return rs.Found([], {})
    reached_root = bool(tail.rows) and tail.rows[0].parent_id is None and not tail.chain
    if reached_root and sum(count(h.text) for h in history) <= budgets.limit // 2:
        return rs.Found([], {"skipped": "whole_path_fits"})
    opts = rs.Options(
        scope=settings.recall_scope,
        candidates=settings.recall_candidates,
        min_ratio=settings.recall_min_ratio,
        fill=settings.recall_fill,
        fill_to=rs.fill_groups(settings.recall_fill_to, budgets.recall_tokens, history, count),
        config=settings.search_config,
    )
    try:
        return await rs.find(
            c,
            conv=conv,
            leaf_id=parent_id,
            history=history,
            paths=rt.path_cache,
            counts=rt.df_memo,
            opts=opts,
            vectors=_vectors(rt, conv, history, settings),
        )
    except Exception as e:  # recall must never break a turn
        log.exception("recall failed")
        return rs.Found([], {"error": type(e).__name__})


def _vectors(rt, conv, history, settings) -> rs.VectorSearch | None:
    """Vector ranking for recall when the latest user message was embedded (``warm_query``)."""
    latest = next((h.text for h in reversed(history) if h.role == "user"), "")
    qv = cached_query(rt, latest)
    if qv is None:
        return None

    async def search(c, conversation_ids, limit: int) -> list[tuple[str, float]]:
        found = await vector_search(
            c,
            user_id=conv.user_id,
            query_vector=qv,
            conversation_ids=conversation_ids,
            limit=limit,
        )
        return [(mid, s) for mid, s in found if s >= settings.recall_min_similarity]

    return search


async def warm_query(rt, *, user_id: str, conversation_id: str, message_id: str | None) -> None:
    """Embed a turn's query (the user message it answers) before any connection is held, so
    recall and memory retrieval find its vector in the cache. Free when embeddings are off."""
    if not message_id or embeddings_service.get(rt) is None:
        return
    async with rt.db.read() as c:
        row = await store.get_message(c, conversation_id, message_id)
        if row.user_id != user_id:
            return
        text = blk.visible_text(row.blocks)
    await embed_query(rt, text)


def _history(rows: list[gather.PathRow]) -> list[asm.HistoryItem]:
    """Rows a model may see: finished or failed messages with visible text (never the placeholder)."""
    return [
        asm.HistoryItem(r.id, r.role, r.text, r.created_at)
        for r in rows
        if r.status != "streaming" and r.text.strip() and r.role in ("user", "assistant")
    ]


async def _read_tail(c, conv, parent_id, blocks, pol, counter, known=None) -> gather.Tail:
    """The unsummarised tail of the path ending at ``parent_id``, read up to the prompt limit
    (``known``: its first rows when the caller has them, ``gather.read_tail``)."""
    return await gather.read_tail(
        c,
        conv.id,
        parent_id,
        blocks,
        count=counter.count,
        max_tokens=pol.limit,
        keep_start=True,
        prime=counter.prime,
        known=known,
    )


async def _assemble(
    c,
    *,
    settings,
    conv,
    parent_id,
    model,
    principal,
    rt,
    blocks,
    tail=None,
    known=None,
    memories: bool = True,
):
    """``tail``: the one ``inline_compaction_needed`` read for the same turn in this transaction;
    ``known``: else the path's first rows when the caller has them (``gather.read_tail``);
    ``memories`` False: the caller knows there is none to read (no memories section)."""
    pol, budgets = budgets_for(settings, model)
    counter = counter_for(model.encoding)
    static = await _static_sections(c, settings, conv)
    if tail is None:
        tail = await _read_tail(c, conv, parent_id, blocks, pol, counter, known)
    history = _history(tail.rows)
    query = next((h.text for h in reversed(history) if h.role == "user"), "")
    budget = budgets.memory_tokens if memories else 0  # (0: no read, an empty section)
    mem, mem_error = await _memories(
        c, rt, principal, conv, query, budget, counter.count, static["agent_mode"]
    )
    found = await _recall(c, rt, settings, conv, parent_id, history, tail, budgets, counter.count)
    inp = asm.ContextInput(
        system_prompt=static["system"],
        history=history,
        style_lines=static["style"],
        project_instructions=static["project"],
        memories=mem,
        summary=[
            asm.SummaryPart(b["id"], int(b.get("level", 0)), b.get("text", ""))
            for b in tail.chain
            if b.get("text")
        ],
        persona=static["persona"],
        agent_mode=static["agent_mode"],
        inline=static["inline"],
        recall=found.groups,
        recall_header=rc.AGENT_HEADER if static["agent_mode"] else found.header,
        now_ms=now_ms(),
    )
    out = await _run_assembler(inp, budgets, counter)
    if found.info:
        out.report["recall"] = found.info
    out.report.update(
        model=model.id,
        encoding=counter.name,
        conversation_id=conv.id,
        leaf_id=parent_id,
        estimated=True,
    )
    if mem_error:
        out.report["memory_error"] = mem_error
    return pol, counter, tail, out


#: Inputs with more text than this are assembled on the text pool (cpu.py), not on the loop: the
#: counts are memo hits after ``prime``, but truncating a message that does not fit re-tokenises it.
ASSEMBLE_OFFLOAD_CHARS = 64_000


async def _run_assembler(inp: asm.ContextInput, budgets: asm.Budgets, counter) -> asm.Assembled:
    texts = [h.text for h in inp.history] + [m.text for g in inp.recall for m in g.messages]
    await counter.prime(texts)
    if sum(map(len, texts)) < ASSEMBLE_OFFLOAD_CHARS:
        return asm.assemble(inp, budgets, counter.count, counter.truncate)
    return await run_text(asm.assemble, inp, budgets, counter.count, counter.truncate)


def _decide(pol, counter, tail, out) -> sm.Decision:
    """Compaction is judged on what is *not* yet summarised: the fixed sections plus the whole
    unsummarised tail, as if it were all verbatim. Recall and the tail always fill the window,
    so the actual request size (or the provider's reported usage) says nothing about the backlog;
    reacting to it would compact a sliver every turn."""
    if not tail.complete:
        # The unsummarised tail is longer than the whole window (the read stopped early): the
        # oldest of it would be silently dropped, so compaction must run before the call.
        # compaction.compact re-reads the full tail and picks the cut itself.
        return sm.Decision(True, True, "tail_exceeds_window", 0)
    msgs = [
        sm.TailMsg(r.id, r.role, r.status, counter.count(r.text) + MESSAGE_OVERHEAD)
        for r in tail.rows
    ]
    rep = out.report
    recalled = next((x["tokens"] for x in rep["sections"] if x["name"] == "recall"), 0)
    history = next((x["tokens"] for x in rep["sections"] if x["name"] == "history"), 0)
    fixed = rep["total_tokens"] - history - recalled
    return sm.decide(msgs, pol.thresholds(), estimated_tokens=fixed + sum(m.tokens for m in msgs))


def resolve_summarizer(rt, model: ModelInfo) -> cp.Summarizer:
    """The extractive summariser for the demo model, else the model itself via its provider."""
    counter = counter_for(model.encoding)
    if model.provider == "demo" or rt is None:
        return cp.ExtractiveSummarizer(counter)
    return cp.ModelSummarizer(rt.providers.provider(model.provider), model, counter)


def resolve_model(rt, model_id: str | None) -> ModelInfo:
    """The conversation's model, or the default one when it is unset or no longer catalogued."""
    reg = rt.providers
    try:
        return reg.resolve(model_id or None)
    except Exception:
        return reg.resolve(None)


async def build_turn_context(
    c: AsyncConnection,
    *,
    settings,
    conv,
    parent_id: str | None,
    model: ModelInfo,
    principal,
    rt=None,
    tail: gather.Tail | None = None,
    known: list[gather.PathRow] | None = None,
    memories: bool = True,
) -> TurnContext:
    """Provider messages and the context report for the turn answering ``parent_id``. It never
    compacts (that would hold ``c`` across a model call): ``report["compaction"]`` says whether
    compaction is needed; call ``ensure_compacted`` before opening the transaction, as a turn
    does, to compact first. ``tail``: what ``inline_compaction_needed`` read in this
    transaction (the same walk up the path, not read twice); ``known``: the path's first rows
    when the caller has them (a turn that has just written a root question reads no path);
    ``memories`` False: the caller knows the user has no memory to read (a turn whose first
    transaction saw none, ``generation/turns.TurnSpec.no_memories``): the section stays empty
    without a read."""
    blocks = list(conv.summary_blocks or [])
    pol, counter, tail, out = await _assemble(
        c,
        settings=settings,
        conv=conv,
        parent_id=parent_id,
        model=model,
        principal=principal,
        rt=rt,
        blocks=blocks,
        tail=tail,
        known=known,
        memories=memories,
    )
    d = _decide(pol, counter, tail, out)
    info = {"needed": d.needed, "inline": d.inline, "reason": d.reason, "ran": False}
    out.report["compaction"] = info
    return TurnContext(out.messages, out.report)


def record_compaction(report: dict, res: cp.Result | None) -> dict:
    """The report with the inline compaction that ran before it was built (``ensure_compacted``)."""
    if res is not None and res.compacted:
        report.setdefault("compaction", {}).update(res.public(), ran=True)
    return report


def compaction_event(report: dict) -> dict | None:
    """The SSE ``compaction`` event payload when this turn compacted inline, else None."""
    info = report.get("compaction") or {}
    if not info.get("ran"):
        return None
    return {
        "mode": "inline",
        "reason": info.get("reason", ""),
        "blocks_added": info.get("blocks_added", 0),
        "summarized_messages": info.get("summarized_messages", 0),
        "merged_blocks": info.get("merged_blocks", 0),
    }


def with_usage(report: dict, input_tokens: int) -> dict:
    """The report with the provider-reported prompt size (which wins over the estimate)."""
    if input_tokens:
        return {**report, "reported_input_tokens": int(input_tokens)}
    return report


async def ensure_compacted(
    rt, *, conversation_id: str, user_id: str, parent_id: str | None, model: ModelInfo
) -> cp.Result | None:
    """Compact inline now if the next turn would need it (call outside any transaction)."""
    async with rt.db.read() as c:
        conv = await store.get_conversation(c, user_id, conversation_id)
        needed, _ = await inline_compaction_needed(
            c, settings=rt.settings, conv=conv, parent_id=parent_id, model=model
        )
    if not needed:
        return None
    return await compact_inline(
        rt, conversation_id=conversation_id, user_id=user_id, parent_id=parent_id, model=model
    )


async def inline_compaction_needed(
    c: AsyncConnection,
    *,
    settings,
    conv,
    parent_id: str | None,
    model: ModelInfo,
    known: list[gather.PathRow] | None = None,
) -> tuple[bool, gather.Tail]:
    """Whether the turn answering ``parent_id`` must compact inline first (``ensure_compacted``'s
    check, in the caller's transaction: a turn reads it with its context when it is not), and
    the tail it read (``build_turn_context(tail=)`` in the same transaction).

    Inline compaction is due exactly when the unsummarised tail is longer than the window (the
    read stopped on the limit: ``_decide``'s ``tail_exceeds_window``; every other reason runs
    after the turn), so the tail alone answers — the context is assembled once per turn, by
    ``build_turn_context``. ``known``: the path's first rows when the turn has them (it has just
    written a root question: then nothing is read)."""
    pol = cp.policy_for(settings, model)
    counter = counter_for(model.encoding)
    blocks = list(conv.summary_blocks or [])
    tail = await _read_tail(c, conv, parent_id, blocks, pol, counter, known)
    return not tail.complete, tail


async def compact_inline(
    rt, *, conversation_id: str, user_id: str, parent_id: str | None, model: ModelInfo
) -> cp.Result | None:
    """The inline compaction itself (a model call: outside any transaction)."""
    return await cp.compact(
        rt.db,
        conversation_id=conversation_id,
        user_id=user_id,
        settings=rt.settings,
        model=model,
        summarizer=resolve_summarizer(rt, model),
        leaf_id=parent_id,
        force=True,
    )


def compaction_job(conversation_id: str) -> Job:
    """The after-turn compaction check (deduplicated per conversation)."""
    return Job("compaction", {"conversation_id": conversation_id}, f"compact:{conversation_id}")


async def enqueue_compaction(c: AsyncConnection, conversation_id: str) -> str | None:
    """Queue the after-turn compaction check (deduplicated per conversation)."""
    j = compaction_job(conversation_id)
    return await enqueue(c, j.kind, j.payload, dedupe_key=j.dedupe_key)

"""Compaction: summarise a path's older messages into ``summary_blocks`` under the lease.

One run: take the compaction lease (or report ``busy``), read the unsummarised tail of the path,
decide with ``summary.decide`` where to cut, summarise the range in chunks that fit the summariser
(no connection is held during the model calls), fold the oldest blocks into a coarser one while the
chain is over its budget (≤ 3 passes), then write the new list with compare-and-set — if the blocks
changed meanwhile nothing is written — together with ``conversations.summary`` (the rendered
summary of the active path, seed 000's field). The lease is released by its owner token.

Summaries come from the conversation's model through the provider interface; the offline ``demo``
model gets the extractive summariser instead, so the default install compacts too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..cpu import run_text
from ..db.clock import now_ms
from ..db.ids import new_id
from ..errors import Conflict, NotFound
from ..providers.base import ChatMessage, ModelInfo, complete
from . import extractive, gather, lease, store
from . import summary as sm
from .tokens import MESSAGE_OVERHEAD, TokenCounter, counter_for

log = logging.getLogger(__name__)
MERGE_PASSES = 3
TRIGGER_SHARE = 0.9  # of the limit: the request size at which compaction runs
SUMMARY_SHARE = 0.2  # of the limit: the most a path's summaries may take


# ── policy: the numbers, derived from settings and the model's window ─────────────────────────────


@dataclass(frozen=True)
class Policy:
    window: int
    reserved_output: int
    keep_rounds: int
    trigger_tokens: int  # request size that triggers compaction
    retain_tokens: int  # verbatim tail kept when it does
    summary_max_tokens: int  # largest single block
    merge_budget: int  # the applicable chain's total; over it the oldest blocks fold
    chunk_tokens: int  # most transcript tokens sent to one summariser call
    lease_ttl_ms: int

    @property
    def limit(self) -> int:
        return self.window - self.reserved_output

    def thresholds(self, keep_rounds: int | None = None) -> sm.Thresholds:
        return sm.Thresholds(
            keep_rounds or self.keep_rounds, self.trigger_tokens, self.limit, self.retain_tokens
        )


def policy_for(settings, model: ModelInfo) -> Policy:
    window = max(int(model.context_window), 64)
    # Room for the longest answer the turn may ask for (generation sends max_output).
    reserved = max(
        1, min(max(int(settings.reserved_output_tokens), int(model.max_output or 0)), window // 2)
    )
    limit = window - reserved
    # Token-driven: compact when the request nears the limit (or a deployment's own cap), keep
    # about half of that verbatim; summaries take at most a fifth of the limit.
    trigger = int(limit * TRIGGER_SHARE)
    if int(settings.compaction_trigger_tokens) > 0:
        trigger = min(trigger, int(settings.compaction_trigger_tokens))
    trigger = max(16, trigger)
    merge_budget = max(64, min(int(settings.summary_budget_tokens), int(limit * SUMMARY_SHARE)))
    return Policy(
        window=window,
        reserved_output=reserved,
        keep_rounds=max(1, int(settings.keep_recent_rounds)),
        trigger_tokens=trigger,
        retain_tokens=max(16, int(trigger * float(settings.compaction_retain_share))),
        summary_max_tokens=max(32, min(int(settings.summary_max_tokens), merge_budget)),
        merge_budget=merge_budget,
        chunk_tokens=max(64, int(limit * 0.6)),
        lease_ttl_ms=int(settings.compaction_lease_ttl_s * 1000),
    )


# ── summarisers ─────────────────────────────────────────────────────────────────────────────────


class Summarizer(Protocol):
    name: str

    async def summarize(self, items: Sequence[tuple[str, str, int]], max_tokens: int) -> str:
        """Summarise ``(role, text, created_at ms)`` messages in at most ``max_tokens``."""
        ...

    async def merge(self, texts: Sequence[str], max_tokens: int) -> str: ...


class ExtractiveSummarizer:
    """Sentence selection (context/extractive.py): the demo model's summariser. It scores and
    tokenises every sentence of the range (hundreds of ms for a long one), so it runs on the text
    pool (cpu.py), never on the event loop."""

    name = "extractive"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    async def summarize(self, items, max_tokens):
        return await run_text(
            extractive.summarize_messages, list(items), max_tokens, self.counter.count
        )

    async def merge(self, texts, max_tokens):
        return await run_text(
            extractive.merge_summaries, list(texts), max_tokens, self.counter.count
        )


SUMMARY_PROMPT = (
    "You compress chat transcripts so a later model call can continue the conversation. Write a "
    "faithful, dense summary of the transcript the user sends, covering BOTH speakers: who said "
    "what, facts about each of them (names, places, preferences, constraints, plans, changes of "
    "plan), decisions, answers given, open questions. Keep the dates given in brackets next to "
    "the events they belong to. No preamble, no invented content, same language as the "
    "transcript, at most {n} tokens."
)
MERGE_PROMPT = (
    "Merge the consecutive conversation summaries the user sends into one shorter summary that "
    "keeps every durable fact (with its date and who said it), decision and open question, in "
    "chronological order; drop small talk first. No preamble, same language as the summaries, "
    "at most {n} tokens."
)


class ModelSummarizer:
    """Summaries written by the conversation's model through the provider interface."""

    def __init__(self, provider, model: ModelInfo, counter: TokenCounter) -> None:
        self.provider = provider
        self.model = model
        self.counter = counter
        self.name = f"{model.provider}:{model.id}"

    async def _ask(self, system: str, body: str, max_tokens: int) -> str:
        msgs = [ChatMessage("system", system), ChatMessage("user", body)]
        out = (await complete(self.provider, self.model, msgs, max_tokens=max_tokens)).strip()
        return self.counter.truncate(out, max_tokens)

    async def summarize(self, items, max_tokens):
        speakers = extractive.SPEAKERS
        lines, day = [], ""
        for role, txt, *when in items:
            if not txt.strip():
                continue
            d = extractive.day_of(when[0]) if when else ""
            prefix = f"[{d}] " if d and d != day else ""
            day = d or day
            lines.append(f"{prefix}{speakers.get(role, role)}: {txt}")
        body = "\n\n".join(lines)
        return await self._ask(SUMMARY_PROMPT.format(n=max_tokens), body, max_tokens)

    async def merge(self, texts, max_tokens):
        body = "\n\n---\n\n".join(texts)
        return await self._ask(MERGE_PROMPT.format(n=max_tokens), body, max_tokens)


# ── one compaction run ──────────────────────────────────────────────────────────────────────────


@dataclass
class Result:
    status: str  # compacted | skipped | busy | conflict
    reason: str = ""
    blocks_added: int = 0
    merged: int = 0
    summarized_messages: int = 0
    chain: list[dict] = field(default_factory=list)  # the applicable chain after the run
    blocks: list[dict] | None = None  # the full stored list after the run (None = unchanged)

    @property
    def compacted(self) -> bool:
        return self.status == "compacted"

    def public(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "blocks_added": self.blocks_added,
            "merged_blocks": self.merged,
            "summarized_messages": self.summarized_messages,
        }


def _block(
    level: int,
    *,
    start: dict,
    end: dict,
    text: str,
    counter: TokenCounter,
    message_count: int,
    summarizer: str,
) -> dict:
    """A summary block from ``start`` (from_* fields) to ``end`` (anchor_* fields)."""
    return {
        "id": new_id("sb"),
        "level": level,
        "from_message_id": start["from_message_id"],
        "from_parent_id": start["from_parent_id"],
        "from_depth": start.get("from_depth", 0),
        "anchor_message_id": end["anchor_message_id"],
        "anchor_depth": end.get("anchor_depth", 0),
        "text": text,
        "tokens": counter.count(text),
        "message_count": message_count,
        "media": [],
        "summarizer": summarizer,
        "created_at": now_ms(),
    }


def _ends(first: gather.PathRow, last: gather.PathRow) -> tuple[dict, dict]:
    return (
        {"from_message_id": first.id, "from_parent_id": first.parent_id, "from_depth": first.depth},
        {"anchor_message_id": last.id, "anchor_depth": last.depth},
    )


async def _load(db, conversation_id: str, user_id: str, leaf_id: str | None, counter):
    async with db.read() as c:
        conv = await store.owned_conversation(c, conversation_id, user_id)
        if conv is None:
            raise NotFound("conversation not found")
        leaf = leaf_id or conv.active_leaf_id
        blocks = list(conv.summary_blocks or [])
        tail = await gather.read_tail(c, conversation_id, leaf, blocks)
    await counter.prime(r.text for r in tail.rows)  # long texts tokenised off the event loop
    return conv, leaf, blocks, tail


async def _summarize(
    summarizer: Summarizer,
    pol: Policy,
    counter: TokenCounter,
    rng: list[gather.PathRow],
    msgs: list[sm.TailMsg],
) -> list[dict]:
    """The level-0 summary blocks of the cut range ``rng`` (``msgs`` are its sizes): one summariser
    call per chunk of at most ``chunk_tokens``."""
    new_blocks: list[dict] = []
    for a, b in sm.chunk_ranges([m.tokens for m in msgs], pol.chunk_tokens):
        part = rng[a:b]
        items = [(r.role, counter.truncate(r.text, pol.chunk_tokens), r.created_at) for r in part]
        target = max(32, min(pol.summary_max_tokens, int(sum(m.tokens for m in msgs[a:b]) * 0.3)))
        text = await summarizer.summarize(items, target)
        first, last = _ends(part[0], part[-1])
        new_blocks.append(
            _block(
                0,
                start=first,
                end=last,
                text=text,
                counter=counter,
                message_count=len(part),
                summarizer=summarizer.name,
            )
        )
    return new_blocks


async def _merge(
    summarizer: Summarizer,
    pol: Policy,
    counter: TokenCounter,
    chain: list[dict],
    stored: list[dict],
) -> tuple[list[dict], list[dict], int]:
    """Fold the oldest blocks of ``chain`` into coarser ones while it is over ``merge_budget`` (at
    most ``MERGE_PASSES`` times): the new chain, the stored blocks pruned of what a merge replaced,
    and how many blocks were merged."""
    merged_count = 0
    for _ in range(MERGE_PASSES):
        fold = sm.merge_plan(chain, pol.merge_budget)
        if not fold:
            break
        target = max(16, min(pol.summary_max_tokens, pol.merge_budget // 2))
        text = await summarizer.merge([b["text"] for b in fold], target)
        level = max(int(b.get("level", 0)) for b in fold) + 1
        coarse = _block(
            level,
            start=fold[0],
            end=fold[-1],
            text=text,
            counter=counter,
            message_count=sum(int(b.get("message_count", 0)) for b in fold),
            summarizer=summarizer.name,
        )
        stored = sm.prune_after_merge(stored, fold, coarse)
        chain = [coarse, *chain[len(fold) :]]
        merged_count += len(fold)
    return chain, stored, merged_count


async def compact(
    db,
    *,
    conversation_id: str,
    user_id: str,
    settings,
    model: ModelInfo,
    summarizer: Summarizer,
    leaf_id: str | None = None,
    manual: bool = False,
    force: bool = False,
    fixed_tokens: int = 0,
) -> Result:
    """Run one compaction of the path ending at ``leaf_id`` (default: the active leaf).

    ``manual`` keeps only the latest round and refuses (409) while a message on the path streams;
    ``force`` compacts whenever there is something to cut (inline mode already decided it);
    ``fixed_tokens`` is the size of the non-history sections for the token trigger.
    """
    pol = policy_for(settings, model)
    counter = counter_for(model.encoding)
    token = await lease.acquire(db, conversation_id, pol.lease_ttl_ms)
    if token is None:
        if manual:
            raise Conflict("this conversation is being compacted", code="compaction_in_progress")
        return Result("busy", "lease_held")
    try:
        conv, leaf, blocks, tail = await _load(db, conversation_id, user_id, leaf_id, counter)
        rows = tail.rows
        if manual and any(r.status == "streaming" for r in rows):
            raise Conflict("a turn is streaming; compact after it finishes", code="turn_streaming")
        msgs = [
            sm.TailMsg(r.id, r.role, r.status, counter.count(r.text) + MESSAGE_OVERHEAD)
            for r in rows
        ]
        chain_tokens = sum(int(b.get("tokens", 0)) for b in tail.chain)
        estimated = fixed_tokens + chain_tokens + sum(m.tokens for m in msgs)
        d = sm.decide(
            msgs,
            pol.thresholds(),
            estimated_tokens=estimated,
            overflow=estimated > pol.limit,
            manual=manual,
        )
        if not d.needed and not (force and d.cut > 0):
            return Result("skipped", d.reason, chain=tail.chain)
        rng = rows[: d.cut]
        new_blocks = await _summarize(summarizer, pol, counter, rng, msgs[: d.cut])
        chain, stored, merged_count = await _merge(
            summarizer, pol, counter, [*tail.chain, *new_blocks], [*blocks, *new_blocks]
        )
        ok = await _write(
            db, conversation_id, blocks, stored, chain, render=(leaf == conv.active_leaf_id)
        )
        if not ok:
            return Result("conflict", "summary_blocks_changed", chain=tail.chain)
        return Result("compacted", d.reason, len(new_blocks), merged_count, len(rng), chain, stored)
    finally:
        await lease.release(db, conversation_id, token)


async def _write(
    db,
    conversation_id: str,
    before: list[dict],
    after: list[dict],
    chain: list[dict],
    *,
    render: bool,
) -> bool:
    """Compare-and-set ``summary_blocks``: write only if nobody changed them since we read."""
    async with db.write() as c:
        current = await store.summary_blocks_for_update(c, conversation_id)
        if current is None:
            return False
        if [b.get("id") for b in current] != [b.get("id") for b in before]:
            return False
        values: dict = {"summary_blocks": after}
        if render:
            values["summary"] = sm.render_summary_text(chain)
        await store.set_summary(c, conversation_id, values)
    return True

"""Memory in the turn loop: the extraction job, the before-turn chat commands, the context source.

Why it exists: these are the three places where memory meets a conversation, and all three apply
the same gates — the admin-wide switch, the user's own ``memory_enabled`` (re-read before every
write) and "workspace conversations neither read nor write personal memory".

- ``memory.extract`` job (enqueued after each completed turn and, debounced, after log-mode
  appends — see ``conversations/followups.py``; dedupe ``memory:<cid>``): catches up over the
  **active path** since ``conversations.memory_cursor``, oldest first, in batches of
  ``memory_extract_max_messages`` until the cursor reaches the leaf (a job does at most
  ``memory_extract_batches_per_job`` batches, then re-enqueues itself). Messages that are
  ancestors of the cursor (already seen) or, off its path, older than it (another branch seen
  before) are skipped, so regenerations and branch switches never re-extract; the extractor runs
  outside any transaction; the writes re-check consent and compare-and-set the cursor.
- ``before_turn``: "remember …"/"记住…" stores at once (as the user's own memory), "forget …"/
  "忘记…" disables the matching memories, before the context of that very turn is built.
- ``memory_source``: what ``build_turn_context`` injects (see retrieval.py); in a workspace
  conversation, the workspace's shared memory (its admins keep it by hand: nothing is extracted
  from a workspace conversation, and chat commands there change no memory).
"""

from __future__ import annotations

import logging
import time

from ..conversations import blocks as blk
from ..conversations import store as cstore
from ..conversations import tree_store
from ..db import schema as t
from ..db.clock import now_ms
from ..embeddings import cached_query
from ..jobs.queue import enqueue
from . import policy as pol
from . import retrieval, service, store
from .extract import (
    ExtractionInput,
    Known,
    LLMExtractor,
    RuleExtractor,
    SourceMessage,
    forget_matches,
    parse_command,
    rule_candidates,
)

log = logging.getLogger(__name__)
C = t.conversations.c
M = t.messages.c
MEM = t.memories.c


def _cap(settings, conv) -> int:
    return settings.memory_per_turn_cap_agent if conv.agent_id else settings.memory_per_turn_cap


# ── the extraction job ──────────────────────────────────────────────────────────────────────────


async def unseen_ids(c, conv, count: int) -> list[str]:
    """Ids of the oldest ``count`` active-path messages extraction has not seen, oldest first.

    Seen: the cursor and its ancestors; and, when the cursor is not on the active path (a branch
    switch, or its message was deleted), every message older than the cursor too — ids are
    time-ordered by insertion, so those belong to a branch read before (the messages' own
    ``created_at`` may be an imported date and orders nothing). The common case, the cursor an
    ancestor of the leaf, costs one walk of the unseen span; the other walks both paths.
    """
    leaf = await store.message_marker(c, conv.id, conv.active_leaf_id)
    cursor = conv.memory_cursor
    if leaf is None or count <= 0 or cursor == leaf.id:
        return []
    if cursor is None:
        return await tree_store.path_oldest_ids(c, conv.id, leaf.id, -1, count)
    cur = await store.message_marker(c, conv.id, cursor)
    if cur is not None and cur.depth < leaf.depth:
        ids = await tree_store.path_oldest_ids(c, conv.id, leaf.id, cur.depth, count + 1)
        if ids and ids[0] == cur.id:
            return ids[1:]
    path = await tree_store.path_ids(c, conv.id, leaf.id, leaf.depth + 1)
    seen = set(await tree_store.path_ids(c, conv.id, cur.id, cur.depth + 1)) if cur else set()
    return [i for i in path if i not in seen and i > cursor][:count]


def _turn_model(reg, rows) -> str | None:
    """The model of the newest assistant message in ``rows`` that the catalogue knows: the model
    the turn used (log-mode messages may name a model this deployment does not serve)."""
    for r in reversed(rows):
        if r.role == "assistant" and r.model_id:
            try:
                return reg.resolve(r.model_id).id
            except Exception:
                continue
    return None


def _extractor(rt, conv, rows=()):
    """An explicit override (``rt.memory_extractor``), else settings: ``rules``, ``llm``, or
    ``auto`` (a real model, else the rule extractor for demo). The model is the configured
    ``memory_extractor_model``, else the one the turn used, else the conversation's."""
    if rt.memory_extractor is not None:
        return rt.memory_extractor(rt, conv)
    mode = getattr(rt.settings, "memory_extractor", "auto")
    if mode == "rules":
        return RuleExtractor()
    try:
        reg = rt.providers
        model = reg.resolve(
            getattr(rt.settings, "memory_extractor_model", "")
            or _turn_model(reg, rows)
            or conv.model_id
            or None
        )
        if model.provider == "demo" and mode == "auto":
            return RuleExtractor()
        return LLMExtractor(reg.provider(model.provider), model)
    except Exception as e:  # no usable model (e.g. an imported conversation's): works offline
        log.info("memory: no usable extraction model (%s), using the rule extractor", e)
        return RuleExtractor()


async def run_extraction(
    rt, conversation_id: str, user_id: str, *, max_batches: int | None = None, attempts: int = 3
) -> dict:
    """Catch up over the conversation's unseen active-path messages, oldest first, in batches of
    ``memory_extract_max_messages``, until the cursor reaches the leaf — or after ``max_batches``
    batches, when the report says ``more`` (the job then re-enqueues itself). A batch whose
    cursor another run moved meanwhile is dropped and the rest re-planned from the new cursor (at
    most ``attempts`` times), so concurrent runs write each fact once."""
    settings = rt.settings
    size = max(1, int(getattr(settings, "memory_extract_max_messages", 50)))
    per_walk = max(1, int(getattr(settings, "memory_extract_batches_per_job", 20)))
    rep: dict = {"processed": 0}
    batches = conflicts = 0
    while True:
        left = per_walk if max_batches is None else min(per_walk, max_batches - batches)
        if left <= 0:
            async with rt.db.read() as c:
                conv = await store.owned_conversation(c, user_id, conversation_id)
                if conv is not None and await unseen_ids(c, conv, 1):
                    rep["more"] = True
            return rep
        async with rt.db.read() as c:
            conv = await store.owned_conversation(c, user_id, conversation_id)
            if conv is None:
                return {**rep, "skipped": "conversation not found"}
            if conv.workspace_id:
                return {**rep, "skipped": "workspace conversation"}
            ids = await unseen_ids(c, conv, size * left)
        if not ids:
            return rep
        cursor = conv.memory_cursor
        for i in range(0, len(ids), size):
            one = await _extract_batch(rt, conv, ids[i : i + size], cursor)
            if one.get("skipped") == "conversation not found":
                return {**rep, "skipped": one["skipped"]}
            if one.get("retry"):
                conflicts += 1
                if conflicts >= attempts:
                    return {**rep, "skipped": one["skipped"]}
                break  # re-plan from the cursor the other run left
            batches += 1
            rep["processed"] += one["processed"]
            rep["outcomes"] = rep.get("outcomes", []) + one["outcomes"]
            rep["rejected"] = rep.get("rejected", 0) + one["rejected"]
            rep["cursor"] = cursor = one["cursor"]
            if one.get("stopped"):
                return rep  # a turn still streaming: the next job takes it from there


async def _run_extractor(rt, extractor, inp: ExtractionInput):
    """The extractor's result (the rules' if it fails), timed for the operator's metrics."""
    t0 = time.monotonic()
    try:
        res = await extractor.extract(inp)
    except Exception:
        log.exception("memory: %s extractor failed, falling back to rules", extractor.name)
        res = await RuleExtractor().extract(inp)
    rt.telemetry.extraction(extractor.name, time.monotonic() - t0)
    return res


def _extraction_input(settings, conv, rows, agent_name: str, known_rows) -> ExtractionInput:
    """What the extractor reads of a batch: its finished user and assistant messages, the
    memories it may restate, and the caps (``_cap`` per user message)."""
    msgs = [
        SourceMessage(r.id, r.role, blk.visible_text(r.blocks), r.created_at)
        for r in rows
        if r.role in ("user", "assistant") and r.status == "complete"
    ]
    turn_cap = _cap(settings, conv)
    return ExtractionInput(
        messages=msgs,
        agent=conv.agent_id is not None,
        agent_name=agent_name,
        cap=turn_cap * max(1, sum(m.role == "user" for m in msgs)),
        turn_cap=turn_cap,
        now=now_ms(),
        existing=[Known(k.memory_text, k.slot, k.value, k.memory_type) for k in known_rows],
    )


async def _extract_batch(rt, conv, ids: list[str], old_cursor: str | None) -> dict:
    """One batch: extract outside any transaction, then write with consent re-checked and the
    cursor compare-and-set (a run that lost the race writes nothing)."""
    settings = rt.settings
    user_id = conv.user_id
    async with rt.db.read() as c:
        found = await cstore.rows_by_ids(c, ids)
        allowed = service.memory_allowed(settings, await service.user_settings(c, user_id))
        known_rows = await store.known_for_extractor(c, user_id, conv.agent_id) if allowed else []
        agent_name = await store.agent_name(c, conv.agent_id)
    rows, stopped = [], False
    for r in found:
        if r.status == "streaming":
            stopped = True  # a turn still running: the next job takes it from here
            break
        rows.append(r)
    if not rows:
        if stopped:
            return {
                "processed": 0,
                "outcomes": [],
                "rejected": 0,
                "cursor": old_cursor,
                "stopped": True,
            }
        return {"skipped": "the batch's messages are gone", "retry": True}
    new_cursor = rows[-1].id
    candidates: list[pol.Candidate] = []
    rejected: list = []
    if allowed:
        inp = _extraction_input(settings, conv, rows, agent_name, known_rows)
        res = await _run_extractor(rt, _extractor(rt, conv, rows), inp)
        candidates, rejected = res.candidates[: inp.cap], res.rejected
    outcomes: list[str] = []
    async with rt.db.write() as c:
        await store.lock_user_memory(c, user_id)
        exists, current = await store.memory_cursor(c, conv.id)
        if not exists:
            return {"skipped": "conversation not found"}
        if current != old_cursor:
            return {"skipped": "another extraction advanced the cursor", "retry": True}
        # Consent is re-checked inside the write transaction, right before writing.
        if candidates and service.memory_allowed(settings, await service.user_settings(c, user_id)):
            now = now_ms()
            for cand in candidates:
                plan = await service.add_candidate(
                    c, user_id, conv.agent_id, cand, "extractor", now
                )
                outcomes.append(plan.outcome)
        await store.set_memory_cursor(c, conv.id, new_cursor)
    out = {
        "processed": len(rows),
        "outcomes": outcomes,
        "rejected": len(rejected),
        "cursor": new_cursor,
    }
    if stopped:
        out["stopped"] = True
    return out


async def extract_job(rt, payload: dict) -> None:
    """Extract a bounded number of batches, then hand the rest to a fresh job (same dedupe key),
    so a long import neither holds one worker for minutes nor starves other conversations."""
    cid, uid = payload["conversation_id"], payload["user_id"]
    per_job = max(1, int(getattr(rt.settings, "memory_extract_batches_per_job", 20)))
    rep = await run_extraction(rt, cid, uid, max_batches=per_job)
    if rep.get("more"):
        async with rt.db.write() as c:
            await enqueue(c, "memory.extract", payload, dedupe_key=f"memory:{cid}")


# ── "remember …" / "forget …" before the turn ───────────────────────────────────────────────────


async def before_turn(
    rt, principal, conv_id: str, user_message_id: str, *, user_text: str | None = None
) -> dict:
    """Handle a chat command in the just-written user message; returns what was done. Memory
    never breaks a turn: a failure is logged and reported, and the turn goes on. With
    ``user_text`` given, a message that is no command costs no database read."""
    if user_text is not None and parse_command(user_text) is None:
        return {"remembered": [], "forgotten": []}
    try:
        return await _before_turn(rt, principal, conv_id, user_message_id)
    except Exception as e:
        log.exception("memory: before_turn failed")
        return {"remembered": [], "forgotten": [], "error": f"{type(e).__name__}: {e}"}


async def _before_turn(rt, principal, conv_id: str, user_message_id: str) -> dict:
    done: dict = {"remembered": [], "forgotten": []}
    async with rt.db.read() as c:
        conv = await store.owned_conversation(c, principal.id, conv_id)
        msg = await cstore.find_message(c, conv_id, user_message_id)
    if conv is None or msg is None or msg.role != "user":
        return done
    cmd = parse_command(blk.visible_text(msg.blocks))
    if cmd is None:
        return done
    if conv.workspace_id:
        done["skipped"] = "workspace conversation"
        return done
    kind, body = cmd
    now = now_ms()
    async with rt.db.write() as c:
        await store.lock_user_memory(c, principal.id)
        if not service.memory_allowed(rt.settings, await service.user_settings(c, principal.id)):
            done["skipped"] = "memory is turned off"
            return done
        if kind == "remember":
            src = SourceMessage(msg.id, "user", blk.visible_text(msg.blocks), msg.created_at)
            cands = [
                pol.Candidate(
                    **{**cand.__dict__, "confidence": service.USER_CONFIDENCE, "importance": 5}
                )
                for cand in rule_candidates(
                    src, agent=conv.agent_id is not None, now=now, origin=pol.USER_ORIGIN
                )
            ]
            if not cands:
                text = body[:1].upper() + body[1:] if body[:1].isascii() else body
                cands = [
                    pol.Candidate(
                        memory_text=text[:500],
                        memory_type="重要事实" if conv.agent_id else "",
                        importance=5,
                        confidence=service.USER_CONFIDENCE,
                        origin=pol.USER_ORIGIN,
                        source_message_ids=(msg.id,),
                        valid_from=msg.created_at,
                        observed_at=msg.created_at,
                    )
                ]
            for cand in cands[: _cap(rt.settings, conv)]:
                plan = await service.add_candidate(
                    c, principal.id, conv.agent_id, cand, principal.id, now
                )
                if plan.memory_id:
                    done["remembered"].append(plan.memory_id)
        else:
            rows = await store.live_visible(c, principal.id, conv.agent_id)
            ids = forget_matches(body, [store.to_mem(r) for r in rows], now=now)
            done["forgotten"] = await service.set_many_status(
                c, principal.id, ids, pol.DISABLED, principal.id, "forgotten in chat", now
            )
    return done


# ── the context source ──────────────────────────────────────────────────────────────────────────


def make_memory_source(rt):
    async def memory_source(
        c, *, principal, conv, query: str, budget_tokens: int, count_tokens, query_vector=None
    ):
        empty = {"lines": [], "ids": [], "header": ""}
        if conv.workspace_id:  # the workspace's shared memory, never the member's own
            if not getattr(rt.settings, "memory_enabled", True):
                return empty
            return await retrieval.select_for_context(
                c,
                user_id=store.InWorkspace(conv.workspace_id, principal.id),
                agent_id=None,
                query=query or "",
                budget_tokens=budget_tokens,
                count_tokens=count_tokens,
                now=now_ms(),
                max_lines=getattr(rt.settings, "memory_inject_max", 50),
            )
        if not service.memory_allowed(rt.settings, principal.settings):
            return empty
        agent = conv.agent_id is not None
        max_lines = (
            getattr(rt.settings, "memory_inject_max_agent", 12)
            if agent
            else getattr(rt.settings, "memory_inject_max", 50)
        )
        return await retrieval.select_for_context(
            c,
            user_id=principal.id,
            agent_id=conv.agent_id,
            query=query or "",
            budget_tokens=budget_tokens,
            count_tokens=count_tokens,
            now=now_ms(),
            max_lines=max_lines,
            # the turn's query vector when the caller embedded it (never embedded here: this runs
            # inside a read transaction, which must not wait on a model)
            query_vector=query_vector or cached_query(rt, query or ""),
        )

    return memory_source

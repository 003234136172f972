"""Memory in the turn loop: the extraction job, the before-turn chat commands, the context source.

Why it exists: these are the three places where memory meets a conversation, and all three apply
the same gates — the admin-wide switch, the user's own ``memory_enabled`` (re-read before every
write) and "workspace conversations neither read nor write personal memory".

- ``memory.extract`` job (enqueued after each completed turn, dedupe ``memory:<cid>``): the new
  messages of the **active path** since ``conversations.memory_cursor`` — messages that are
  ancestors of the cursor (already seen) or older than it (another branch seen before) are skipped,
  so regenerations and branch switches never re-extract; the extractor runs outside any
  transaction; the writes re-check consent and compare-and-set the cursor.
- ``before_turn``: "remember …"/"记住…" stores at once (as the user's own memory), "forget …"/
  "忘记…" disables the matching memories, before the context of that very turn is built.
- ``memory_source``: what ``build_turn_context`` injects (see retrieval.py).
"""

from __future__ import annotations

import logging

from sqlalchemy import select, update

from ..conversations import blocks as blk
from ..conversations import store as cstore
from ..db import schema as t
from ..db.clock import now_ms
from ..embeddings import cached_query
from ..jobs.queue import handler
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


async def new_messages(c, conv, max_messages: int) -> tuple[list, str | None]:
    """(complete rows of the active path not yet seen, the cursor after them)."""
    if not conv.active_leaf_id:
        return [], None
    ids = await cstore.path_ids(c, conv.id, conv.active_leaf_id, max_messages)
    rows = await cstore.rows_by_ids(c, ids)
    cursor = conv.memory_cursor
    if cursor:
        cur = (
            await c.execute(
                select(M.id, M.depth, M.created_at).where(
                    M.id == cursor, M.conversation_id == conv.id
                )
            )
        ).first()
        if cur is not None:
            min_depth = rows[0].depth if rows else 0
            seen = set(await cstore.path_ids(c, conv.id, cursor, max(1, cur.depth - min_depth + 1)))
            rows = [r for r in rows if r.id not in seen and r.created_at >= cur.created_at]
    out = []
    for r in rows:
        if r.status == "streaming":
            break  # a turn still running: the next job takes it from here
        out.append(r)
    return out, (out[-1].id if out else None)


def _extractor(rt, conv):
    """An explicit override (``rt.extras["memory_extractor"]``), else settings: ``rules``, ``llm``,
    or ``auto`` (the conversation's model when it is a real one, the rule extractor for demo)."""
    override = rt.extras.get("memory_extractor")
    if override is not None:
        return (
            override(rt, conv)
            if callable(override) and not hasattr(override, "extract")
            else override
        )
    mode = getattr(rt.settings, "memory_extractor", "auto")
    if mode == "rules":
        return RuleExtractor()
    try:
        from ..generation.state import get_state

        reg = get_state(rt).registry
        model = reg.resolve(
            getattr(rt.settings, "memory_extractor_model", "") or conv.model_id or None
        )
        if model.provider == "demo" and mode == "auto":
            return RuleExtractor()
        return LLMExtractor(reg.provider(model.provider), model)
    except Exception:  # no usable model: extraction still works offline
        log.exception("memory: no extraction model, using the rule extractor")
        return RuleExtractor()


async def run_extraction(rt, conversation_id: str, user_id: str, *, attempts: int = 3) -> dict:
    """Process the conversation's unseen active-path messages; returns a small report. When another
    run moved the cursor meanwhile, start again from the new cursor (idempotent either way)."""
    rep: dict = {}
    for _ in range(attempts):
        rep = await _extract_once(rt, conversation_id, user_id)
        if not rep.get("retry"):
            break
    return rep


async def _extract_once(rt, conversation_id: str, user_id: str) -> dict:
    settings = rt.settings
    max_messages = getattr(settings, "memory_extract_max_messages", 50)
    async with rt.db.read() as c:
        conv = (
            await c.execute(
                select(t.conversations).where(C.id == conversation_id, C.user_id == user_id)
            )
        ).first()
        if conv is None:
            return {"skipped": "conversation not found"}
        if conv.workspace_id:
            return {"skipped": "workspace conversation"}
        rows, new_cursor = await new_messages(c, conv, max_messages)
        allowed = service.memory_allowed(settings, await service.user_settings(c, user_id))
        known_rows = []
        if rows and allowed:
            q = (
                select(t.memories)
                .where(store.scope_cond(user_id, conv.agent_id), MEM.status.in_(sorted(pol.LIVE)))
                .order_by(MEM.importance.desc(), MEM.updated_at.desc())
                .limit(50)
            )
            known_rows = (await c.execute(q)).all()
        agent_name = ""
        if conv.agent_id:
            agent_name = (
                await c.execute(select(t.agents.c.name).where(t.agents.c.id == conv.agent_id))
            ).scalar() or ""
    old_cursor = conv.memory_cursor
    if not rows:
        return {"processed": 0}
    result_candidates: list[pol.Candidate] = []
    rejected: list = []
    if allowed:
        now = now_ms()
        msgs = [
            SourceMessage(r.id, r.role, blk.visible_text(r.blocks), r.created_at)
            for r in rows
            if r.role in ("user", "assistant") and r.status == "complete"
        ]
        inp = ExtractionInput(
            messages=msgs,
            agent=conv.agent_id is not None,
            agent_name=agent_name,
            cap=_cap(settings, conv),
            now=now,
            existing=[Known(k.memory_text, k.slot, k.value, k.memory_type) for k in known_rows],
        )
        extractor = _extractor(rt, conv)
        try:
            res = await extractor.extract(inp)
        except Exception:
            log.exception("memory: %s extractor failed, falling back to rules", extractor.name)
            res = await RuleExtractor().extract(inp)
        result_candidates, rejected = res.candidates[: inp.cap], res.rejected
    outcomes: list[str] = []
    async with rt.db.write() as c:
        await store.lock_user_memory(c, user_id)
        current = (await c.execute(select(C.memory_cursor).where(C.id == conversation_id))).first()
        if current is None:
            return {"skipped": "conversation not found"}
        if current.memory_cursor != old_cursor:
            return {"skipped": "another extraction advanced the cursor", "retry": True}
        # Consent is re-checked inside the write transaction, right before writing.
        if result_candidates and service.memory_allowed(
            settings, await service.user_settings(c, user_id)
        ):
            now = now_ms()
            for cand in result_candidates:
                plan = await service.add_candidate(
                    c, user_id, conv.agent_id, cand, "extractor", now
                )
                outcomes.append(plan.outcome)
        await c.execute(
            update(t.conversations).where(C.id == conversation_id).values(memory_cursor=new_cursor)
        )
    return {
        "processed": len(rows),
        "outcomes": outcomes,
        "rejected": len(rejected),
        "cursor": new_cursor,
    }


@handler("memory.extract")
async def extract_job(rt, payload: dict) -> None:
    await run_extraction(rt, payload["conversation_id"], payload["user_id"])


# ── "remember …" / "forget …" before the turn ───────────────────────────────────────────────────


async def before_turn(rt, principal, conv_id: str, user_message_id: str) -> dict:
    """Handle a chat command in the just-written user message; returns what was done. Memory
    never breaks a turn: a failure is logged and reported, and the turn goes on."""
    try:
        return await _before_turn(rt, principal, conv_id, user_message_id)
    except Exception as e:
        log.exception("memory: before_turn failed")
        return {"remembered": [], "forgotten": [], "error": f"{type(e).__name__}: {e}"}


async def _before_turn(rt, principal, conv_id: str, user_message_id: str) -> dict:
    done: dict = {"remembered": [], "forgotten": []}
    async with rt.db.read() as c:
        conv = (
            await c.execute(
                select(t.conversations).where(C.id == conv_id, C.user_id == principal.id)
            )
        ).first()
        msg = (
            await c.execute(
                select(t.messages).where(M.id == user_message_id, M.conversation_id == conv_id)
            )
        ).first()
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
            scope = (
                MEM.agent_id.is_(None)
                if conv.agent_id is None
                else (MEM.agent_id.is_(None)) | (MEM.agent_id == conv.agent_id)
            )
            rows = (
                await c.execute(
                    select(t.memories).where(
                        MEM.user_id == principal.id, scope, MEM.status.in_(sorted(pol.LIVE))
                    )
                )
            ).all()
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
        if conv.workspace_id or not service.memory_allowed(rt.settings, principal.settings):
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


def install(rt) -> None:
    rt.extras["memory_source"] = make_memory_source(rt)
    rt.extras["before_turn"] = before_turn

"""Choosing which memories a turn sees: fetch a bounded candidate set, rank, pack into a budget.

Why it exists: seed 001 (docs/specs.md) injected "the newest 20" with no budget and ignored validity; here a turn
sees ACTIVE and QUERY_DEPENDENT rows inside their validity window, constraints/boundaries first,
then by a score of importance, full-text relevance to the latest user message, confidence and
recency, packed line by line into a token budget. The SQL side is bounded (top rows by the static
order plus the best full-text matches), so the cost barely grows with the number of memories a user
has; ranking and packing are pure functions. When embeddings are configured and the turn's query
was embedded, relevance is the better of the full-text score and the cosine similarity of the
memory's vector (so "what should I cook?" finds "is vegetarian" without a shared word).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from ..embeddings import vector_search
from . import policy as pol
from . import store

CONSTRAINT_TYPES = ("constraint", "边界")
MAX_LINE_CHARS = 500  # seed 000's memory cap

AGENT_HEADER = "以下是用户与该 Agent 的长期记忆，请优先尊重："
WORKSPACE_HEADER = (
    "Shared memory of this workspace, kept by its admins for every member. [CURRENT] lines are "
    "current facts; [CONTEXT-DEPENDENT] lines hold only for the time or situation they state. "
    "Use them when relevant; never contradict a constraint."
)
NATIVE_HEADER = (
    "Long-term memories about the user, from earlier conversations. [CURRENT] lines are current "
    "facts; [CONTEXT-DEPENDENT] lines hold only for the time or situation they state. Use them "
    "when relevant; never contradict a user's constraint."
)

# Score weights (constraints are placed first regardless of score).
W_IMPORTANCE, W_RELEVANCE, W_CONFIDENCE, W_RECENCY = 0.40, 0.35, 0.15, 0.10
RECENCY_HALF_LIFE_MS = 30 * 86_400_000


@dataclass(frozen=True)
class Ranked:
    id: str
    line: str
    score: float
    constraint: bool


def _bigrams(s: str) -> set[str]:
    cjk = re.sub(r"[^\u3400-\u9fff]", "", s)
    return {cjk[i : i + 2] for i in range(len(cjk) - 1)}


def cjk_overlap(query: str | set[str], text: str) -> float:
    """Character-bigram overlap for Chinese (FTS tokenises a CJK run as one word)."""
    q = _bigrams(query) if isinstance(query, str) else query
    if not q:
        return 0.0
    return len(q & _bigrams(text)) / len(q)


def render_line(row, *, agent: bool) -> str:
    text = (row.memory_text or "").replace("\n", " ").strip()[:MAX_LINE_CHARS]
    if agent:
        mtype = row.memory_type or "重要事实"
        return f"- [{mtype} / 重要度 {int(row.importance)}] {text}"
    tag = "[CURRENT]" if row.status == pol.ACTIVE else "[CONTEXT-DEPENDENT]"
    return f"{tag} {text}{_period(row)}"


def _period(row) -> str:
    """The dates a time-bound memory holds for ("Is in Tokyo (2024-03-18 to 2024-03-24)"): the
    text says "next week" no more, and the model cannot know when "this week" was said."""
    if row.status != pol.QUERY_DEPENDENT or row.valid_until is None:
        return ""
    last = _day(row.valid_until - 1)  # valid_until is exclusive
    first = _day(row.valid_from) if row.valid_from is not None else None
    if first is None:
        return f" (until {last})"
    return f" ({first})" if first == last else f" ({first} to {last})"


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def rank(rows, relevance: dict[str, float], query: str, now: int, *, agent: bool) -> list[Ranked]:
    """Order rows: constraints/boundaries first, then by the weighted score (pure)."""
    out = []
    qgrams = _bigrams(query)
    for r in rows:
        rel = relevance.get(r.id, 0.0)
        if qgrams:
            rel = max(rel, cjk_overlap(qgrams, r.memory_text))
        age = max(0, now - int(r.updated_at or 0))
        recency = 0.5 ** (age / RECENCY_HALF_LIFE_MS)
        score = (
            W_IMPORTANCE * (int(r.importance) - 1) / 4
            + W_RELEVANCE * rel
            + W_CONFIDENCE * float(r.confidence)
            + W_RECENCY * recency
        )
        out.append(
            Ranked(
                r.id,
                render_line(r, agent=agent),
                round(score, 6),
                r.memory_type in CONSTRAINT_TYPES,
            )
        )
    out.sort(key=lambda x: (not x.constraint, -x.score, x.id))
    return out


def pack(
    ranked: list[Ranked], header: str, budget_tokens: int, count_tokens, *, max_lines: int
) -> tuple[list[str], list[str]]:
    """Greedy: take lines in rank order while header + lines fit the budget (pure)."""
    if budget_tokens <= 0 or not ranked:
        return [], []
    used = count_tokens(header) + 1
    lines: list[str] = []
    ids: list[str] = []
    for r in ranked:
        if len(lines) >= max_lines:
            break
        cost = count_tokens(r.line) + 1
        if used + cost > budget_tokens:
            continue
        used += cost
        lines.append(r.line)
        ids.append(r.id)
    return lines, ids


def _prefer_agent_scope(rows, agent_id: str | None):
    """In an agent conversation a slot answered in the agent's scope hides the user-wide row."""
    if agent_id is None:
        return rows
    agent_slots = {(r.slot, r.status) for r in rows if r.agent_id == agent_id and r.slot}
    return [
        r for r in rows if not (r.agent_id is None and r.slot and (r.slot, r.status) in agent_slots)
    ]


async def candidates(
    c: AsyncConnection,
    user_id: store.Owner,
    agent_id: str | None,
    query: str,
    now: int,
    *,
    per_status: int = 60,
    constraint_limit: int = 30,
    fts_limit: int = 30,
    query_vector=None,
    vector_limit: int = 30,
) -> tuple[list, dict[str, float]]:
    """Injectable rows (bounded) and their full-text relevance to ``query``.

    Three index range reads (``idx_memories_inject`` per status in importance/recency order, and
    ``idx_memories_user_type_status`` for constraints) plus the best full-text matches: the work
    does not grow with the number of memories a user has. A user with no injectable memory
    costs the first read only.
    """
    found = await store.injectable_top(
        c,
        user_id,
        agent_id,
        now,
        per_status=per_status,
        constraint_types=CONSTRAINT_TYPES,
        constraint_limit=constraint_limit,
    )
    if not found and per_status > 0:
        # no injectable row at all (the top reads return one whenever one exists): any search
        # hit would be dropped by ``injectable_by_ids`` below, so no search is run
        return [], {}
    rel = await store.fts_scores(
        c, user_id, query, agent_id=agent_id, statuses=pol.INJECTABLE, limit=fts_limit
    )
    if query_vector is not None and isinstance(user_id, str):  # workspaces: full text only
        hits = await vector_search(
            c, user_id=user_id, query_vector=query_vector, owner_kind="memory", limit=vector_limit
        )
        for mid, sim in hits:
            rel[mid] = max(rel.get(mid, 0.0), 0.0, sim)
    missing = [i for i in rel if i not in found]
    if missing:
        for r in await store.injectable_by_ids(c, user_id, agent_id, now, missing):
            found[r.id] = r
    return _prefer_agent_scope(list(found.values()), agent_id), rel


async def select_for_context(
    c: AsyncConnection,
    *,
    user_id: store.Owner,
    agent_id: str | None,
    query: str,
    budget_tokens: int,
    count_tokens,
    now: int,
    max_lines: int,
    query_vector=None,
) -> dict:
    agent = agent_id is not None
    header = AGENT_HEADER if agent else NATIVE_HEADER
    if isinstance(user_id, store.InWorkspace):
        header = WORKSPACE_HEADER
    rows, rel = await candidates(c, user_id, agent_id, query, now, query_vector=query_vector)
    ranked = rank(rows, rel, query, now, agent=agent)
    lines, ids = pack(ranked, header, budget_tokens, count_tokens, max_lines=max_lines)
    return {"lines": lines, "ids": ids, "header": header if lines else ""}

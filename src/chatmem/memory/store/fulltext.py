"""What a turn may see: memory full-text scores and the bounded injection reads.

Why it exists: ``memory/retrieval.py`` ranks and packs memories into a prompt from these reads (FTS5
on SQLite, ``to_tsvector('simple', …)`` on PostgreSQL, as migration 0002 built them; the top rows
by importance through ``idx_memories_inject``). They are kept apart from the rows' writes because
they are on every turn's path and must not grow with the number of memories a user has.
"""

from __future__ import annotations

import functools
import re

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    and_,
    bindparam,
    literal,
    or_,
    select,
    text,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from ...db import hot
from .. import policy as pol
from .owner import IN_WORKSPACE, MEM, InWorkspace, Owner, owner_cond

# ── full text ───────────────────────────────────────────────────────────────────────────────────

_TOKEN = re.compile(r"\w+", re.U)
STOPWORDS = frozenset(
    "a an the i me my mine you your is am are was were be been do does did to of in on at for and "
    "or but with what who where when which how that this it its we our us he she they them "
    "please can could would should will just about".split()
)


def query_tokens(q: str, limit: int = 16) -> list[str]:
    toks, seen = [], set()
    for tok in _TOKEN.findall((q or "").lower()):
        if tok in STOPWORDS or (len(tok) < 2 and tok.isascii()) or tok in seen:
            continue
        seen.add(tok)
        toks.append(tok)
        if len(toks) >= limit:
            break
    return toks


def _owner_sql(owner: Owner) -> tuple[str, str]:
    """(the SQL condition on ``m``, its ``:u`` parameter) selecting one owner's rows."""
    if isinstance(owner, InWorkspace):
        return "m.workspace_id = :u AND m.workspace_id <> ''", owner.workspace_id
    return "m.user_id = :u AND m.workspace_id = ''", owner


def _agent_scope_sql(agent_id: str | None, agent_scope_only: bool) -> str:
    """The agent condition of a memory search: user-wide rows, that agent's, or both."""
    if agent_id is None:
        return "m.agent_id IS NULL"
    if agent_scope_only:
        return "m.agent_id = :agent"
    return "(m.agent_id IS NULL OR m.agent_id = :agent)"


async def fts_scores(
    c: AsyncConnection,
    user_id: Owner,
    query: str,
    *,
    agent_id: str | None,
    statuses,
    limit: int = 50,
    match_all: bool = False,
    include_agent_scope_only: bool = False,
) -> dict[str, float]:
    """Memory id → relevance in (0, 1] for rows matching ``query``'s words (best first).

    In an agent scope both the user-wide rows and that agent's rows are searched (what an agent
    conversation can see) unless ``include_agent_scope_only``.
    """
    toks = query_tokens(query)
    if not toks:
        return {}
    scope = _agent_scope_sql(agent_id, include_agent_scope_only)
    st, (owner_sql, u) = list(statuses), _owner_sql(user_id)
    params: dict = {"u": u, "lim": limit, "agent": agent_id}
    st_sql = ", ".join(f":s{i}" for i in range(len(st)))
    params.update({f"s{i}": s for i, s in enumerate(st)})
    if c.dialect.name == "sqlite":
        joiner = " AND " if match_all else " OR "
        params["q"] = joiner.join('"' + tok.replace('"', "") + '"' for tok in toks)
        sql = text(
            "SELECT memories_fts.memory_id AS id, bm25(memories_fts) AS score FROM memories_fts "
            "JOIN memories m ON m.id = memories_fts.memory_id "
            f"WHERE memories_fts MATCH :q AND {owner_sql} AND m.status IN ({st_sql}) AND {scope} "
            "ORDER BY score LIMIT :lim"
        )
        rows = (await c.execute(sql, params)).all()
        raw = {r.id: -float(r.score) for r in rows}
    else:
        joiner = " & " if match_all else " | "
        params["q"] = joiner.join(toks)
        # The GIN index finds the matches; ts_rank (which re-parses the text) runs only on the
        # most important/recent few hundred of them, so a user with many matches costs the same.
        params["pool"] = max(200, 4 * limit)
        sql = text(
            "SELECT s.id AS id, ts_rank(to_tsvector('simple', s.memory_text), "
            "to_tsquery('simple', :q)) AS score FROM ("
            "SELECT m.id, m.memory_text FROM memories m "
            "WHERE to_tsvector('simple', m.memory_text) @@ to_tsquery('simple', :q) "
            f"AND {owner_sql} AND m.status IN ({st_sql}) AND {scope} "
            "ORDER BY m.importance DESC, m.updated_at DESC LIMIT :pool) s "
            "ORDER BY score DESC LIMIT :lim"
        )
        rows = (await c.execute(sql, params)).all()
        raw = {r.id: float(r.score) for r in rows}
    if not raw:
        return {}
    top = max(raw.values())
    if top <= 0:
        return dict.fromkeys(raw, 1.0)
    return {k: max(0.05, v / top) for k, v in raw.items()}


# ── what a turn may see (memory/retrieval.py ranks and packs these) ──────────────────────────────

#: What ranking and rendering need (no JSON columns to decode).
INJECT_COLS = (
    MEM.id,
    MEM.agent_id,
    MEM.memory_text,
    MEM.memory_type,
    MEM.slot,
    MEM.status,
    MEM.importance,
    MEM.confidence,
    MEM.updated_at,
    MEM.valid_from,
    MEM.valid_until,
)


def _inject_scope(agent_id: str | None, now: int):
    """(scope, validity window) of the rows a turn may see."""
    scope = (
        MEM.agent_id.is_(None)
        if agent_id is None
        else or_(MEM.agent_id.is_(None), MEM.agent_id == agent_id)
    )
    valid = and_(
        or_(MEM.valid_from.is_(None), MEM.valid_from <= now),
        or_(MEM.valid_until.is_(None), MEM.valid_until > now),
    )
    return scope, valid


def _injectable(user_id: Owner, agent_id: str | None, now: int):
    scope, valid = _inject_scope(agent_id, now)
    return and_(owner_cond(user_id), MEM.status.in_(sorted(pol.INJECTABLE)), scope, valid)


@functools.cache
def _top_statement(workspace: bool, agent: bool):
    """``injectable_top``'s statement for one shape (a workspace's memory or a user's; with an
    agent scope or not), built once: building the UNION of three subqueries took ~4 ms of CPU,
    more than running it. Parameters: owner, agent_id, now, per_status, constraint_limit,
    types (expanding)."""
    owner = bindparam("owner", type_=String)
    mine = (
        and_(MEM.workspace_id == owner, IN_WORKSPACE)
        if workspace
        else and_(MEM.user_id == owner, MEM.workspace_id == "")
    )
    scope = (
        or_(MEM.agent_id.is_(None), MEM.agent_id == bindparam("agent_id"))
        if agent
        else MEM.agent_id.is_(None)
    )
    now = bindparam("now", type_=BigInteger)
    valid = and_(
        or_(MEM.valid_from.is_(None), MEM.valid_from <= now),
        or_(MEM.valid_until.is_(None), MEM.valid_until > now),
    )
    order = (MEM.importance.desc(), MEM.updated_at.desc())
    parts = [
        select(*INJECT_COLS, literal(i, Integer).label("part"))
        .where(mine, MEM.status == status, scope, valid)
        .order_by(*order)
        .limit(bindparam("per_status", type_=Integer))
        for i, status in enumerate((pol.ACTIVE, pol.QUERY_DEPENDENT))
    ]
    types = MEM.memory_type.in_(bindparam("types", expanding=True))
    parts.append(
        select(*INJECT_COLS, literal(2, Integer).label("part"))
        .where(mine, MEM.status.in_(sorted(pol.INJECTABLE)), scope, valid, types)
        .order_by(*order)
        .limit(bindparam("constraint_limit", type_=Integer))
    )
    # each part is a subquery: SQLite allows no ORDER BY / LIMIT on a compound's own members
    top = union_all(*(select(*p.subquery(f"p{i}").c) for i, p in enumerate(parts))).subquery()
    return select(*(top.c[col.name] for col in INJECT_COLS)).order_by(
        top.c.part, top.c.importance.desc(), top.c.updated_at.desc()
    )


async def injectable_top(
    c: AsyncConnection,
    user_id: Owner,
    agent_id: str | None,
    now: int,
    *,
    per_status: int,
    constraint_types: tuple[str, ...],
    constraint_limit: int,
) -> dict:
    """id → row: the top ACTIVE and QUERY_DEPENDENT rows by importance/recency, then constraints.

    Three index range reads (``idx_memories_inject`` per status, ``idx_memories_user_type_status``
    for constraints), sent as one statement (a UNION ALL of the three bounded parts, in that
    order): the work does not grow with the number of memories a user has.
    """
    workspace = isinstance(user_id, InWorkspace)
    params = {
        "owner": user_id.workspace_id if isinstance(user_id, InWorkspace) else user_id,
        "now": now,
        "per_status": per_status,
        "constraint_limit": constraint_limit,
        "types": list(constraint_types),
    }
    if agent_id is not None:
        params["agent_id"] = agent_id
    q = _top_statement(workspace, agent_id is not None)
    found: dict = {}
    for r in (await hot.execute(c, q, params)).all():
        found.setdefault(r.id, r)
    return found


async def injectable_by_ids(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, now: int, ids: list[str]
) -> list:
    """The rows among ``ids`` a turn may see (full-text or vector hits outside the top rows)."""
    q = select(*INJECT_COLS).where(_injectable(user_id, agent_id, now), MEM.id.in_(ids))
    return list((await c.execute(q)).all())

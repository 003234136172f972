"""SQL for memories and their audit trail. Every function takes an open connection and the owner.

Why it exists: the service and the job handler share one way to read a scope, apply a policy Plan
(rows + one ``memory_events`` row per change, in the caller's transaction), search the full-text
index (FTS5 on SQLite, ``to_tsvector('simple', …)`` on PostgreSQL, as migration 0002 built them)
and purge. Nothing here decides anything: decisions are in ``policy.py``.

The owner of a memory scope (``Owner``) is a user id (their personal memory: ``workspace_id`` '')
or an :class:`InWorkspace` (a workspace's shared memory, issue 16). Personal reads never see a
workspace row, and a workspace's reads see only its own rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Integer, and_, delete, insert, literal, or_, select, text, union_all, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.ids import new_id
from ..errors import NotFound
from . import policy as pol

MEM = t.memories.c
EV = t.memory_events.c
MSG = t.messages.c

_MEM_FIELDS = (
    "memory_text",
    "memory_type",
    "slot",
    "value",
    "status",
    "origin",
    "confidence",
    "importance",
    "source_message_ids",
    "supersedes",
    "superseded_by",
    "affected_domains",
    "valid_from",
    "valid_until",
    "reason",
)


@dataclass(frozen=True)
class InWorkspace:
    """A workspace's shared memory, changed by ``user_id`` (recorded as the row's creator and as
    each event's user; membership and role are checked by the caller)."""

    workspace_id: str
    user_id: str


Owner = str | InWorkspace


#: The partial index on workspace memories (migration 0016) covers exactly these rows; personal
#: rows — nearly all of them — stay out of it, so a personal read never walks it.
IN_WORKSPACE = text("memories.workspace_id <> ''")


def owner_cond(owner: Owner):
    """The rows of one memory owner: a user's personal rows, or one workspace's."""
    if isinstance(owner, InWorkspace):
        # the literal predicate lets both engines use the partial idx_memories_workspace
        return and_(MEM.workspace_id == owner.workspace_id, IN_WORKSPACE)
    return and_(MEM.user_id == owner, MEM.workspace_id == "")


def owner_uid(owner: Owner) -> str:
    """The user id written on new rows and events."""
    return owner.user_id if isinstance(owner, InWorkspace) else owner


def _events_of(owner: Owner, mid: str):
    if isinstance(owner, InWorkspace):  # the memory was checked to be the workspace's
        return EV.memory_id == mid
    return and_(EV.memory_id == mid, EV.user_id == owner)


def to_mem(row) -> pol.Mem:
    m = row._mapping
    return pol.Mem(
        id=m["id"],
        memory_text=m["memory_text"],
        slot=m["slot"],
        value=m["value"],
        status=m["status"],
        origin=m["origin"],
        confidence=float(m["confidence"]),
        importance=int(m["importance"]),
        memory_type=m["memory_type"],
        source_message_ids=list(m["source_message_ids"] or []),
        supersedes=list(m["supersedes"] or []),
        superseded_by=list(m["superseded_by"] or []),
        affected_domains=list(m["affected_domains"] or []),
        valid_from=m["valid_from"],
        valid_until=m["valid_until"],
        created_at=m["created_at"],
        reason=m["reason"],
    )


def scope_cond(user_id: Owner, agent_id: str | None):
    """Exactly one scope: user-wide (agent_id NULL) or one (user, agent) pair."""
    agent = MEM.agent_id.is_(None) if agent_id is None else MEM.agent_id == agent_id
    return and_(owner_cond(user_id), agent)


async def get_owned(c: AsyncConnection, user_id: Owner, mid: str, *, deleted_ok: bool = False):
    row = (await c.execute(select(t.memories).where(MEM.id == mid, owner_cond(user_id)))).first()
    if row is None or (row.status == pol.DELETED and not deleted_ok):
        raise NotFound("memory not found", details={"id": mid})
    return row


async def rows_by_ids(c: AsyncConnection, user_id: Owner, ids) -> list:
    ids = list(ids)
    if not ids:
        return []
    q = select(t.memories).where(owner_cond(user_id), MEM.id.in_(ids))
    return list((await c.execute(q)).all())


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


async def lock_user_memory(c: AsyncConnection, user_id: Owner) -> None:
    """Serialise memory writes of one user for this transaction. SQLite already has one writer;
    on PostgreSQL a transaction-scoped advisory lock keeps two writers (the extraction job and a
    "remember …" in chat, say) from both inserting an ACTIVE row for the same slot."""
    if c.dialect.name == "postgresql":
        key = f"ws:{user_id.workspace_id}" if isinstance(user_id, InWorkspace) else user_id
        await c.execute(
            text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": f"chatmem:memory:{key}"}
        )


# ── reading a scope for the policy ──────────────────────────────────────────────────────────────


async def related(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, cand: pol.Candidate
) -> list[pol.Mem]:
    """Rows of the candidate's scope that share its slot or (probably) its text."""
    conds = []
    if cand.slot:
        conds.append(MEM.slot == cand.slot)
    ids = await fts_scores(
        c,
        user_id,
        cand.memory_text,
        agent_id=agent_id,
        statuses=pol.STATUSES,
        limit=20,
        match_all=True,
        include_agent_scope_only=True,
    )
    if ids:
        conds.append(MEM.id.in_(list(ids)))
    conds.append(MEM.memory_text == cand.memory_text)
    q = select(t.memories).where(scope_cond(user_id, agent_id), or_(*conds))
    return [to_mem(r) for r in (await c.execute(q)).all()]


async def slot_rows(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, slot: str
) -> list[pol.Mem]:
    if not slot:
        return []
    q = select(t.memories).where(scope_cond(user_id, agent_id), MEM.slot == slot)
    return [to_mem(r) for r in (await c.execute(q)).all()]


async def linked_rows(c: AsyncConnection, user_id: Owner, m: pol.Mem) -> list[pol.Mem]:
    """Rows that point at ``m`` or that ``m`` points at (for purge)."""
    ids = set(m.supersedes) | set(m.superseded_by)
    rows = [to_mem(r) for r in await rows_by_ids(c, user_id, ids)]
    if m.slot:  # back-links can only come from the same slot
        q = select(t.memories).where(owner_cond(user_id), MEM.slot == m.slot, MEM.id != m.id)
        have = {r.id for r in rows}
        rows += [to_mem(r) for r in (await c.execute(q)).all() if r.id not in have]
    return rows


# ── writing ─────────────────────────────────────────────────────────────────────────────────────


async def add_event(
    c: AsyncConnection,
    user_id: Owner,
    memory_id: str,
    event: str,
    actor: str,
    before: dict | None,
    after: dict | None,
    reason: str = "",
    now: int | None = None,
) -> None:
    await c.execute(
        insert(t.memory_events).values(
            id=new_id("mev"),
            memory_id=memory_id,
            user_id=owner_uid(user_id),
            event=event,
            actor=actor,
            before=before,
            after=after,
            reason=reason[:500],
            created_at=now or now_ms(),
        )
    )


async def insert_mem(
    c: AsyncConnection,
    user_id: Owner,
    agent_id: str | None,
    m: pol.Mem,
    actor: str,
    now: int,
    event: str = "created",
) -> None:
    values = {k: getattr(m, k) for k in _MEM_FIELDS}
    src = m.source_message_ids[0] if m.source_message_ids else None
    uid = owner_uid(user_id)
    if src is not None:
        ok = (await c.execute(select(MSG.id).where(MSG.id == src, MSG.user_id == uid))).scalar()
        src = ok
    ws = user_id.workspace_id if isinstance(user_id, InWorkspace) else ""
    await c.execute(
        insert(t.memories).values(
            id=m.id,
            user_id=uid,
            workspace_id=ws,
            agent_id=agent_id,
            source_message_id=src,
            created_at=now,
            updated_at=now,
            **values,
        )
    )
    await add_event(c, user_id, m.id, event, actor, None, pol.snapshot(m), m.reason, now)


async def apply_changes(
    c: AsyncConnection, user_id: Owner, changes: list[pol.Change], actor: str, now: int
) -> None:
    for ch in changes:
        if ch.after:
            await c.execute(
                update(t.memories)
                .where(MEM.id == ch.memory_id, owner_cond(user_id))
                .values(updated_at=now, **ch.after)
            )
        await add_event(
            c, user_id, ch.memory_id, ch.event, actor, ch.before, ch.after, ch.reason, now
        )


async def apply_plan(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, plan: pol.Plan, actor: str, now: int
) -> None:
    """Write a Plan: the new row (created event) first so links to it resolve, then the changes."""
    if plan.insert is not None:
        ev = {"conflict": "conflict", "stale": "created"}.get(plan.outcome, "created")
        await insert_mem(c, user_id, agent_id, plan.insert, actor, now, ev)
    await apply_changes(c, user_id, plan.changes, actor, now)


async def events_for(c: AsyncConnection, user_id: Owner, mid: str) -> list:
    q = select(t.memory_events).where(_events_of(user_id, mid)).order_by(EV.created_at, EV.id)
    return list((await c.execute(q)).all())


async def purge_row(c: AsyncConnection, user_id: Owner, mid: str) -> None:
    await c.execute(delete(t.memory_events).where(_events_of(user_id, mid)))
    await c.execute(delete(t.memories).where(MEM.id == mid, owner_cond(user_id)))


async def source_messages(c: AsyncConnection, user_id: Owner, ids) -> dict[str, object]:
    """Source messages the user can still see (their own, in a conversation they own); a
    workspace's memory is written by hand and shows none."""
    ids = list({i for i in ids if i})
    if not ids or isinstance(user_id, InWorkspace):
        return {}
    C = t.conversations.c
    q = (
        select(MSG.id, MSG.role, MSG.search_text, MSG.created_at, MSG.conversation_id)
        .join(t.conversations, C.id == MSG.conversation_id)
        .where(MSG.id.in_(ids), C.user_id == user_id)
    )
    return {r.id: r for r in (await c.execute(q)).all()}


# ── what the extraction job reads and moves ─────────────────────────────────────────────────────

CONV = t.conversations.c


async def owned_conversation(c: AsyncConnection, user_id: str, conversation_id: str):
    q = select(t.conversations).where(CONV.id == conversation_id, CONV.user_id == user_id)
    return (await c.execute(q)).first()


async def message_marker(c: AsyncConnection, conversation_id: str, mid: str | None):
    """(id, depth) of one message of the conversation, None when it is gone."""
    if not mid:
        return None
    q = select(MSG.id, MSG.depth).where(MSG.id == mid, MSG.conversation_id == conversation_id)
    return (await c.execute(q)).first()


async def known_for_extractor(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, limit: int = 50
) -> list:
    """The scope's live memories an extractor is shown (most important, newest first)."""
    q = (
        select(t.memories)
        .where(scope_cond(user_id, agent_id), MEM.status.in_(sorted(pol.LIVE)))
        .order_by(MEM.importance.desc(), MEM.updated_at.desc())
        .limit(limit)
    )
    return list((await c.execute(q)).all())


async def live_visible(c: AsyncConnection, user_id: Owner, agent_id: str | None) -> list:
    """The live memories a conversation sees: user-wide ones, plus its agent's when it has one
    (what "forget …" in that conversation may disable)."""
    scope = (
        MEM.agent_id.is_(None)
        if agent_id is None
        else (MEM.agent_id.is_(None)) | (MEM.agent_id == agent_id)
    )
    q = select(t.memories).where(owner_cond(user_id), scope, MEM.status.in_(sorted(pol.LIVE)))
    return list((await c.execute(q)).all())


async def agent_name(c: AsyncConnection, agent_id: str | None) -> str:
    if not agent_id:
        return ""
    q = select(t.agents.c.name).where(t.agents.c.id == agent_id)
    return (await c.execute(q)).scalar() or ""


async def memory_cursor(c: AsyncConnection, conversation_id: str) -> tuple[bool, str | None]:
    """(the conversation exists, its memory cursor)."""
    q = select(CONV.memory_cursor).where(CONV.id == conversation_id)
    row = (await c.execute(q)).first()
    return (row is not None, row.memory_cursor if row is not None else None)


async def set_memory_cursor(c: AsyncConnection, conversation_id: str, cursor: str | None) -> None:
    await c.execute(
        update(t.conversations).where(CONV.id == conversation_id).values(memory_cursor=cursor)
    )


async def user_settings(c: AsyncConnection, user_id: str) -> dict:
    """The user's settings (memory_enabled and the like); {} for an unknown user."""
    row = (await c.execute(select(t.users.c.settings).where(t.users.c.id == user_id))).first()
    return dict(row.settings or {}) if row else {}


async def owns_agent(c: AsyncConnection, user_id: str, agent_id: str) -> bool:
    q = select(t.agents.c.id).where(t.agents.c.id == agent_id, t.agents.c.user_id == user_id)
    return (await c.execute(q)).first() is not None


@dataclass(frozen=True)
class ListFilters:
    """The list endpoint's filters; ``agent_id`` None = every scope, ``"none"`` = user-wide only."""

    status: list[str] | None = None
    memory_type: str | None = None
    agent_id: str | None = None
    slot: str | None = None
    q: str | None = None


def _like(q: str) -> str:
    return "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _list_cond(user_id: Owner, f: ListFilters, after: tuple | None) -> list:
    cond = [owner_cond(user_id)]
    cond.append(MEM.status.in_(f.status) if f.status else MEM.status != pol.DELETED)
    if f.memory_type:
        cond.append(MEM.memory_type == f.memory_type)
    if f.agent_id == "none":
        cond.append(MEM.agent_id.is_(None))
    elif f.agent_id:
        cond.append(MEM.agent_id == f.agent_id)
    if f.slot:
        cond.append(MEM.slot == f.slot)
    if f.q:
        pat = _like(f.q)
        cond.append(or_(MEM.memory_text.ilike(pat, escape="\\"), MEM.value.ilike(pat, escape="\\")))
    if after:
        updated, mid = after
        cond.append(or_(MEM.updated_at < updated, and_(MEM.updated_at == updated, MEM.id < mid)))
    return cond


async def list_page(
    c: AsyncConnection, user_id: Owner, f: ListFilters, after: tuple | None, limit: int
) -> list:
    """Up to ``limit`` of the user's memories, newest update first, after the (updated_at, id)."""
    query = (
        select(t.memories)
        .where(*_list_cond(user_id, f, after))
        .order_by(MEM.updated_at.desc(), MEM.id.desc())
        .limit(limit)
    )
    return list((await c.execute(query)).all())


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
    scope, valid = _inject_scope(agent_id, now)
    order = (MEM.importance.desc(), MEM.updated_at.desc())
    parts = [
        select(*INJECT_COLS, literal(i, Integer).label("part"))
        .where(owner_cond(user_id), MEM.status == status, scope, valid)
        .order_by(*order)
        .limit(per_status)
        for i, status in enumerate((pol.ACTIVE, pol.QUERY_DEPENDENT))
    ]
    parts.append(
        select(*INJECT_COLS, literal(2, Integer).label("part"))
        .where(_injectable(user_id, agent_id, now), MEM.memory_type.in_(constraint_types))
        .order_by(*order)
        .limit(constraint_limit)
    )
    # each part is a subquery: SQLite allows no ORDER BY / LIMIT on a compound's own members
    top = union_all(*(select(*p.subquery(f"p{i}").c) for i, p in enumerate(parts))).subquery()
    q = select(*(top.c[col.name] for col in INJECT_COLS)).order_by(
        top.c.part, top.c.importance.desc(), top.c.updated_at.desc()
    )
    found: dict = {}
    for r in (await c.execute(q)).all():
        found.setdefault(r.id, r)
    return found


async def injectable_by_ids(
    c: AsyncConnection, user_id: Owner, agent_id: str | None, now: int, ids: list[str]
) -> list:
    """The rows among ``ids`` a turn may see (full-text or vector hits outside the top rows)."""
    q = select(*INJECT_COLS).where(_injectable(user_id, agent_id, now), MEM.id.in_(ids))
    return list((await c.execute(q)).all())

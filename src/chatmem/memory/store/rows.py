"""Memory rows and their audit trail: read a scope for the policy, write a Plan, list, purge.

Why it exists: the service and the job handler share one way to apply a policy Plan (rows + one
``memory_events`` row per change, in the caller's transaction). Nothing here decides anything:
decisions are in ``policy.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ...db import schema as t
from ...db.clock import now_ms
from ...db.ids import new_id
from ...errors import NotFound
from .. import policy as pol
from .fulltext import fts_scores
from .owner import (
    _MEM_FIELDS,
    EV,
    MEM,
    MSG,
    InWorkspace,
    Owner,
    owner_cond,
    owner_uid,
    scope_cond,
    to_mem,
)


def _events_of(owner: Owner, mid: str):
    if isinstance(owner, InWorkspace):  # the memory was checked to be the workspace's
        return EV.memory_id == mid
    return and_(EV.memory_id == mid, EV.user_id == owner)


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

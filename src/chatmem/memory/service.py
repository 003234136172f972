"""Memory use-cases for users: list, add, edit, enable/disable, delete, purge, history.

Why it exists: routes (native ``/api/me/memories``) and the seed-000 (docs/specs.md) compat layer
(``/rpc/agent/my/{agentId}/memories``) call the same functions, each one transaction scoped to the
calling Principal; another user's memory id is a 404, like a missing one. Every change writes a
``memory_events`` row (purge removes the memory and its events).

Seed-000 compat (``AgentMemorySchema``) maps onto these rows as follows:

- ``content`` = ``memory_text``; ``type`` = ``memory_type``; ``importance`` = ``importance``;
  ``sourceMessageId`` = ``source_message_id``; ``agentId`` = ``agent_id``;
  ``createdAtMs``/``updatedAtMs`` = ``created_at``/``updated_at``;
- status: seed ``active`` ↔ ACTIVE, ``disabled`` ↔ DISABLED, ``deleted`` ↔ DELETED
  (the one display map of the other native statuses is ``compat/memories.py:STATUS_OUT``);
- list: ``list_memories(db, p, agent_id=…, limit=100, full_source_text=True)`` (non-deleted,
  newest update first, each with ``source_messages[0]`` carrying ``text``);
- PATCH: ``update_memory(db, p, memory_id, {"memory_type"|"memory_text"|"importance"|"status"},
  agent_id=…)`` with status ``"ACTIVE"``/``"DISABLED"`` (``compat/memories.py:STATUS_IN``);
- DELETE: ``delete_memory(db, p, memory_id, agent_id=…)`` (soft; 404 when missing/deleted).
"""

from __future__ import annotations

from collections import deque

from ..auth.models import Principal
from ..contracts.cursor import decode_cursor, encode_cursor
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..embeddings.jobs import schedule_memories
from ..errors import Conflict, NotFound, Unprocessable
from . import policy as pol
from . import store
from .wire import MemoryIn, memory_out, source_ids

USER_CONFIDENCE = 0.95


def memory_allowed(settings, principal_settings: dict | None) -> bool:
    """The admin-wide switch and the user's own setting (checked before every automatic write)."""
    user_on = bool((principal_settings or {}).get("memory_enabled", True))
    return bool(getattr(settings, "memory_enabled", True)) and user_on


async def user_settings(c, user_id: str) -> dict:
    return await store.user_settings(c, user_id)


def _owner(p: Principal, owner: store.Owner | None) -> store.Owner:
    """The memory scope a call works on: the caller's personal memory unless a workspace's
    (``store.InWorkspace``, whose membership and role the workspace use-case checked)."""
    return p.id if owner is None else owner


async def _out(c, p: store.Owner, rows, *, full_source_text: bool = False) -> list[dict]:
    sources = await store.source_messages(c, p, source_ids(rows))
    return [memory_out(r, sources, full_source_text=full_source_text) for r in rows]


async def _owned(c, p: store.Owner, mid: str, agent_id: str | None, *, deleted_ok: bool = False):
    row = await store.get_owned(c, p, mid, deleted_ok=deleted_ok)
    if agent_id is not None and row.agent_id != agent_id:
        raise NotFound("memory not found", details={"id": mid})
    return row


# ── list / get ──────────────────────────────────────────────────────────────────────────────────


async def list_memories(
    db: Database,
    p: Principal,
    *,
    status: list[str] | None = None,
    memory_type: str | None = None,
    agent_id: str | None = None,
    slot: str | None = None,
    q: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
    full_source_text: bool = False,
    owner: store.Owner | None = None,
) -> dict:
    """Newest update first. ``agent_id``: None = every scope, ``"none"`` = user-wide only."""
    if status:
        bad = [s for s in status if s not in pol.STATUSES]
        if bad:
            raise Unprocessable(
                f"unknown status {bad[0]!r}",
                code="invalid_status",
                details={"allowed": list(pol.STATUSES)},
            )
    after = decode_cursor(cursor, (int, str)) if cursor else None
    filters = store.ListFilters(status, memory_type, agent_id, slot, q)
    async with db.read() as c:
        o = _owner(p, owner)
        rows = await store.list_page(c, o, filters, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        items = await _out(c, o, rows, full_source_text=full_source_text)
    nxt = encode_cursor(rows[-1].updated_at, rows[-1].id) if more else None
    return {"items": items, "next_cursor": nxt}


async def get_memory(
    db: Database,
    p: Principal,
    mid: str,
    *,
    agent_id: str | None = None,
    full_source_text: bool = False,
    owner: store.Owner | None = None,
) -> dict:
    o = _owner(p, owner)
    async with db.read() as c:
        row = await _owned(c, o, mid, agent_id)
        [out] = await _out(c, o, [row], full_source_text=full_source_text)
    return out


# ── add by hand ─────────────────────────────────────────────────────────────────────────────────


async def add_candidate(
    c, user_id: store.Owner, agent_id: str | None, cand: pol.Candidate, actor: str, now: int
) -> pol.Plan:
    """Run one candidate through the policy against the fresh rows of its scope, and write it."""
    existing = await store.related(c, user_id, agent_id, cand)
    plan = pol.plan_candidate(existing, cand, new_id("mem"), now)
    await store.apply_plan(c, user_id, agent_id, plan, actor, now)
    await schedule_memories(c, store.owner_uid(user_id))  # its vector (none without an embedder)
    return plan


async def create_memory(
    db: Database, settings, p: Principal, body: MemoryIn, *, owner: store.Owner | None = None
) -> dict:
    """Add a memory by hand. In a workspace only the server-wide switch applies (the member's
    own memory setting is about their personal memory)."""
    now, o = now_ms(), _owner(p, owner)
    async with db.write() as c:
        await store.lock_user_memory(c, o)
        mine = {} if owner is not None else await user_settings(c, p.id)
        if not memory_allowed(settings, mine):
            raise Conflict("memory is turned off for this account", code="memory_disabled")
        if body.agent_id and not await store.owns_agent(c, p.id, body.agent_id):
            raise NotFound("agent not found", details={"agent_id": body.agent_id})
        if (
            body.valid_until is not None
            and body.valid_from is not None
            and body.valid_until <= body.valid_from
        ):
            raise Unprocessable("valid_until must be after valid_from", code="invalid_validity")
        text = body.memory_text.strip()
        if not text:  # as an edit: a whitespace-only text would store an empty memory
            raise Unprocessable("memory_text may not be empty", code="validation_error")
        slot = body.slot.strip().lower()
        cand = pol.Candidate(
            memory_text=text,
            memory_type=body.memory_type.strip(),
            slot=slot,
            value=body.value.strip(),
            importance=body.importance,
            confidence=USER_CONFIDENCE,
            status=body.status,
            valid_from=body.valid_from if body.valid_from is not None else now,
            valid_until=body.valid_until,
            origin=pol.USER_ORIGIN,
            observed_at=now,
            affected_domains=(slot,) if slot else (),
        )
        plan = await add_candidate(c, o, body.agent_id, cand, p.id, now)
        row = await store.get_owned(c, o, plan.memory_id or "")
        [out] = await _out(c, o, [row])
    return out


# ── edit / enable / disable ─────────────────────────────────────────────────────────────────────


def _event_for(old_status: str, new_status: str, content_changed: bool) -> str:
    if new_status != old_status and not content_changed:
        if new_status == pol.DISABLED:
            return "disabled"
        return "resolved" if old_status == pol.UNKNOWN_CURRENT else "enabled"
    return "edited"


VALIDITY = ("valid_from", "valid_until")


def _content_changes(changes: dict, old: pol.Mem) -> dict:
    """The text fields and validity window of a PATCH that differ from the memory's."""
    values: dict = {}
    for k in ("memory_text", "memory_type", "slot", "value"):
        if k in changes:
            v = changes[k].strip()
            if k == "slot":
                v = v.lower()
            if k == "memory_text" and not v:
                raise Unprocessable("memory_text may not be empty", code="validation_error")
            if v != getattr(old, k):
                values[k] = v
    window = {k: changes[k] if k in changes else getattr(old, k) for k in VALIDITY}
    lo, hi = window["valid_from"], window["valid_until"]
    if lo is not None and hi is not None and hi < lo:
        raise Unprocessable(
            "valid_until may not be before valid_from",
            code="invalid_validity",  # as on create
            details={"valid_from": lo, "valid_until": hi},
        )
    values.update(
        {k: changes[k] for k in VALIDITY if k in changes and changes[k] != getattr(old, k)}
    )
    return values


def _check_transition(old_status: str, new_status: str) -> None:
    """A user may set a memory ACTIVE or DISABLED, and only where the policy allows it (else 422)."""
    if new_status not in pol.USER_TRANSITIONS:
        raise Unprocessable(
            f"status may only be set to ACTIVE or DISABLED, not {new_status!r}",
            code="invalid_status_transition",
            details={
                "from": old_status,
                "to": new_status,
                "allowed": sorted(pol.USER_TRANSITIONS),
            },
        )
    if not pol.can_transition(old_status, new_status):
        raise Unprocessable(
            f"a {old_status} memory cannot be set to {new_status}",
            code="invalid_status_transition",
            details={"from": old_status, "to": new_status},
        )


async def _supersede_and_reason(
    c, o: store.Owner, agent_id, old: pol.Mem, values: dict, reason: str, now: int
) -> list[pol.Change]:
    """An edit that leaves the memory ACTIVE in a slot (enable, resolve, a new slot or value)
    supersedes the slot's other live rows: their changes, with ``values`` given the new
    ``supersedes`` links; ``values["reason"]`` says why the status moved. Updates ``values``."""
    target_status = values.get("status", old.status)
    others: list[pol.Change] = []
    slot = values.get("slot", old.slot)
    if (
        target_status == pol.ACTIVE
        and slot
        and ("status" in values or "slot" in values or "value" in values)
    ):
        target = pol.Mem(
            **{**old.__dict__, **{k: v for k, v in values.items() if k in old.__dict__}}
        )
        peers = await store.slot_rows(c, o, agent_id, slot)
        others = pol.plan_activate(peers, target, now, "set by the user")
        gained = [i for i in pol.superseded_ids(others) if i not in old.supersedes]
        if gained:
            values["supersedes"] = old.supersedes + gained
        if old.status == pol.UNKNOWN_CURRENT or "status" in values:
            values["reason"] = reason or "set by the user"
    elif target_status == pol.DISABLED and "status" in values:
        values["reason"] = reason or "disabled by the user"
    elif reason:
        values["reason"] = reason
    return others


async def update_memory(
    db: Database,
    p: Principal,
    mid: str,
    changes: dict,
    *,
    agent_id: str | None = None,
    full_source_text: bool = False,
    owner: store.Owner | None = None,
) -> dict:
    """PATCH: text, type, slot, value, importance, validity, status (ACTIVE↔DISABLED; else 422)."""
    # a validity bound may be cleared with an explicit null; other nulls mean "unchanged"
    changes = {k: v for k, v in changes.items() if v is not None or k in VALIDITY}
    reason = (changes.pop("reason", None) or "").strip()
    now, o = now_ms(), _owner(p, owner)
    async with db.write() as c:
        await store.lock_user_memory(c, o)
        row = await _owned(c, o, mid, agent_id)
        old = store.to_mem(row)
        new_status = changes.get("status", old.status)
        if "status" in changes:
            _check_transition(old.status, new_status)
        values = _content_changes(changes, old)
        content_changed = bool(values)
        if "importance" in changes and changes["importance"] != old.importance:
            values["importance"] = int(changes["importance"])
        if new_status != old.status:
            values["status"] = new_status
        if not values:
            [out] = await _out(c, o, [row], full_source_text=full_source_text)
            return out
        if content_changed:
            values["origin"] = pol.USER_ORIGIN  # the user vouches for what they wrote
            values["confidence"] = max(old.confidence, USER_CONFIDENCE)
        target_status = values.get("status", old.status)
        others = await _supersede_and_reason(c, o, row.agent_id, old, values, reason, now)
        before = {k: getattr(old, k) for k in values if hasattr(old, k)}
        ev = _event_for(old.status, target_status, content_changed)
        await store.apply_changes(
            c, o, [pol.Change(mid, ev, before, values, values.get("reason", reason))], p.id, now
        )
        await store.apply_changes(c, o, others, p.id, now)
        await schedule_memories(c, p.id)  # an edit or re-enable needs a (new) vector
        row = await store.get_owned(c, o, mid)
        [out] = await _out(c, o, [row], full_source_text=full_source_text)
    return out


async def delete_memory(
    db: Database,
    p: Principal,
    mid: str,
    *,
    agent_id: str | None = None,
    owner: store.Owner | None = None,
) -> None:
    """Soft delete: hidden from lists and context, kept (with its audit trail) until purged."""
    now, o = now_ms(), _owner(p, owner)
    async with db.write() as c:
        row = await _owned(c, o, mid, agent_id)
        ch = pol.Change(
            mid,
            "deleted",
            {"status": row.status},
            {"status": pol.DELETED, "reason": "deleted by the user"},
            "deleted by the user",
        )
        await store.apply_changes(c, o, [ch], p.id, now)


async def purge_memory(
    db: Database,
    p: Principal,
    mid: str,
    *,
    agent_id: str | None = None,
    owner: store.Owner | None = None,
) -> None:
    """Hard delete: the memory and its audit rows are gone; links to it are removed."""
    now, o = now_ms(), _owner(p, owner)
    async with db.write() as c:
        await store.lock_user_memory(c, o)
        row = await _owned(c, o, mid, agent_id, deleted_ok=True)
        m = store.to_mem(row)
        changes = pol.plan_purge(await store.linked_rows(c, o, m), m)
        await store.apply_changes(c, o, changes, "system", now)
        await store.purge_row(c, o, mid)


# ── history ─────────────────────────────────────────────────────────────────────────────────────


def _event_out(e) -> dict:
    return {
        "id": e.id,
        "event": e.event,
        "actor": e.actor,
        "before": e.before,
        "after": e.after,
        "reason": e.reason,
        "created_at": e.created_at,
    }


async def history(
    db: Database, p: Principal, mid: str, *, max_chain: int = 100, owner: store.Owner | None = None
) -> dict:
    """The audit trail of one memory and its supersession chain (oldest value first)."""
    o = _owner(p, owner)
    async with db.read() as c:
        row = await store.get_owned(c, o, mid, deleted_ok=True)
        events = await store.events_for(c, o, mid)
        seen = {row.id: row}
        todo = deque([row])
        while todo and len(seen) < max_chain:
            r = todo.popleft()
            nxt = [
                i for i in list(r.supersedes or []) + list(r.superseded_by or []) if i not in seen
            ]
            for n in await store.rows_by_ids(c, o, nxt):
                seen[n.id] = n
                todo.append(n)
        chain_rows = sorted(
            seen.values(),
            key=lambda r: (r.valid_from if r.valid_from is not None else r.created_at, r.id),
        )
        [mem] = await _out(c, o, [row])
    chain = [
        {
            k: r._mapping[k]
            for k in (
                "id",
                "memory_text",
                "slot",
                "value",
                "status",
                "valid_from",
                "valid_until",
                "supersedes",
                "superseded_by",
                "created_at",
                "updated_at",
            )
        }
        for r in chain_rows
    ]
    return {"memory": mem, "events": [_event_out(e) for e in events], "chain": chain}


async def set_many_status(
    c, user_id: str, ids: list[str], status: str, actor: str, reason: str, now: int
) -> list[str]:
    """Disable (or otherwise set) several rows at once, one event each (the 'forget' command)."""
    rows = await store.rows_by_ids(c, user_id, ids)
    changes = [
        pol.Change(
            r.id,
            "disabled" if status == pol.DISABLED else "edited",
            {"status": r.status},
            {"status": status, "reason": reason},
            reason,
        )
        for r in rows
        if r.status != status
    ]
    await store.apply_changes(c, user_id, changes, actor, now)
    return [ch.memory_id for ch in changes]

"""The memory policy: how a new candidate fact changes what is remembered (pure, deterministic).

Why it exists: mem0 let a model choose ADD/UPDATE/DELETE and it chose wrong; here a **slot** key
(``home_location``, ``name`` …) decides supersession by rule, so the outcome is reproducible and
testable. This module imports neither a framework nor a database: the store loads the rows of one
scope (user-wide, or one (user, agent) pair), calls a ``plan_*`` function, and applies the Plan.

Rules (docs/architecture.md, docs/specs.md):

- a candidate whose source message already backs a matching memory is a no-op (re-reading the same
  message — e.g. after switching branches — never changes anything);
- a matching memory the user DISABLED or DELETED suppresses extracted candidates (a forgotten fact is
  not re-learnt from old text); a user-written candidate is stored regardless;
- no slot → dedupe by normalised text (reinforce), else insert;
- same slot + same value → reinforce (new source, confidence raised, never lowered);
- time-bound candidates (QUERY_DEPENDENT, or a closed validity window) never supersede: they are
  stored QUERY_DEPENDENT with their validity, beside the stable fact;
- same slot + new value:
  * a live row written by the user is never overridden by an extracted candidate: the candidate is
    stored UNKNOWN_CURRENT for the user to resolve;
  * otherwise order decides (``valid_from`` of the candidate, i.e. when it was said, against the
    row's): newer → the old rows become STALE, ``superseded_by`` the new ACTIVE row which
    ``supersedes`` them, their ``valid_until`` closed at the new ``valid_from``; older → the
    candidate is recorded already STALE, superseded by the current row; equal (no order) → both
    UNKNOWN_CURRENT;
  * a user-written candidate (``remember …``, add by hand) supersedes every live row of the slot.
- making a row ACTIVE by hand (enable, resolve, edit into a slot) supersedes the slot's other live
  rows, so a scope never holds two ACTIVE rows for one slot;
- purging a row removes it from the links of the rows it was linked to; a STALE row left without a
  superseding row becomes DISABLED (not injected, still visible), keeping the link invariant.

Every change is a :class:`Change` carrying the event name written to ``memory_events``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace

ACTIVE = "ACTIVE"
QUERY_DEPENDENT = "QUERY_DEPENDENT"
STALE = "STALE"
UNKNOWN_CURRENT = "UNKNOWN_CURRENT"
DISABLED = "DISABLED"
DELETED = "DELETED"

STATUSES = (ACTIVE, QUERY_DEPENDENT, STALE, UNKNOWN_CURRENT, DISABLED, DELETED)
LIVE = frozenset({ACTIVE, QUERY_DEPENDENT, UNKNOWN_CURRENT})
INJECTABLE = frozenset({ACTIVE, QUERY_DEPENDENT})
USER_ORIGIN = "user"

#: Statuses a user may set by hand, and from which statuses (PATCH); anything else is a 422.
USER_TRANSITIONS: dict[str, frozenset[str]] = {
    DISABLED: frozenset({ACTIVE, QUERY_DEPENDENT, UNKNOWN_CURRENT, DISABLED}),
    ACTIVE: frozenset({ACTIVE, DISABLED, UNKNOWN_CURRENT}),
}

_PUNCT = re.compile(r"[\s\"'`“”‘’.,;:!?。，；：！？、()\[\]（）【】<>《》-]+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+", re.I)


def normalize_text(s: str) -> str:
    """Case-, width- and punctuation-insensitive form used for text dedupe."""
    s = unicodedata.normalize("NFKC", s or "").casefold()
    return _PUNCT.sub(" ", s).strip()


def normalize_value(s: str) -> str:
    """Slot values compare without case, punctuation or a leading article ('the Bay Area')."""
    return _LEADING_ARTICLE.sub("", normalize_text(s))


@dataclass
class Mem:
    """The policy's view of one ``memories`` row."""

    id: str
    memory_text: str
    slot: str = ""
    value: str = ""
    status: str = ACTIVE
    origin: str = "extracted"
    confidence: float = 0.8
    importance: int = 3
    memory_type: str = ""
    source_message_ids: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    affected_domains: list[str] = field(default_factory=list)
    valid_from: int | None = None
    valid_until: int | None = None
    created_at: int = 0
    reason: str = ""

    @property
    def order(self) -> tuple[int, str]:
        """When the fact became true as far as we know (what supersession compares); ties within a
        millisecond are broken by the newest source message id (ids are time-ordered)."""
        t = self.valid_from if self.valid_from is not None else self.created_at
        return t, max(self.source_message_ids, default="")


@dataclass(frozen=True)
class Candidate:
    """A fact proposed by an extractor, by ``remember …`` or by a user's POST."""

    memory_text: str
    memory_type: str = ""
    slot: str = ""
    value: str = ""
    importance: int = 3
    confidence: float = 0.7
    status: str = ACTIVE  # ACTIVE | QUERY_DEPENDENT
    valid_from: int | None = None
    valid_until: int | None = None
    source_message_ids: tuple[str, ...] = ()
    affected_domains: tuple[str, ...] = ()
    origin: str = "extracted"  # extracted | user | tool
    observed_at: int = (
        0  # when it was said (source message time); the order when valid_from is None
    )

    @property
    def order(self) -> tuple[int, str]:
        t = self.valid_from if self.valid_from is not None else self.observed_at
        return t, max(self.source_message_ids, default="")

    @property
    def time_bound(self) -> bool:
        return self.status == QUERY_DEPENDENT or self.valid_until is not None


@dataclass
class Change:
    """One row change: ``before``/``after`` hold only the fields that changed."""

    memory_id: str
    event: (
        str  # created | reinforced | superseded | conflict | unlinked | edited | enabled | disabled
    )
    before: dict | None
    after: dict
    reason: str = ""


@dataclass
class Plan:
    outcome: str  # created | reinforced | superseded | conflict | stale | duplicate | suppressed
    insert: Mem | None = None
    changes: list[Change] = field(default_factory=list)
    memory_id: str | None = None  # the row the candidate ended up in (None when suppressed)


def _diff(old: Mem, new: Mem) -> tuple[dict, dict]:
    before, after = {}, {}
    for k in (
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
        "valid_from",
        "valid_until",
        "reason",
    ):
        a, b = getattr(old, k), getattr(new, k)
        if a != b:
            before[k], after[k] = a, b
    return before, after


def _change(old: Mem, new: Mem, event: str, reason: str = "") -> Change:
    before, after = _diff(old, new)
    return Change(old.id, event, before, after, reason)


def _snapshot(m: Mem) -> dict:
    return {
        "memory_text": m.memory_text,
        "memory_type": m.memory_type,
        "slot": m.slot,
        "value": m.value,
        "status": m.status,
        "origin": m.origin,
        "confidence": m.confidence,
        "importance": m.importance,
        "source_message_ids": list(m.source_message_ids),
        "supersedes": list(m.supersedes),
        "superseded_by": list(m.superseded_by),
        "valid_from": m.valid_from,
        "valid_until": m.valid_until,
    }


def _add(xs: list[str], *ys: str) -> list[str]:
    out = list(xs)
    for y in ys:
        if y not in out:
            out.append(y)
    return out


def _same(m: Mem, c: Candidate) -> bool:
    if c.slot and m.slot == c.slot:
        return normalize_value(m.value or m.memory_text) == normalize_value(
            c.value or c.memory_text
        )
    if not c.slot and not m.slot:
        return normalize_text(m.memory_text) == normalize_text(c.memory_text)
    return normalize_text(m.memory_text) == normalize_text(c.memory_text)


def _new_row(c: Candidate, new_id: str, now: int, status: str, reason: str = "") -> Mem:
    valid_from = c.valid_from if c.valid_from is not None else (c.observed_at or now)
    return Mem(
        id=new_id,
        memory_text=c.memory_text.strip(),
        slot=c.slot,
        value=c.value.strip(),
        status=status,
        origin=c.origin,
        confidence=round(min(1.0, max(0.0, c.confidence)), 4),
        importance=min(5, max(1, int(c.importance))),
        memory_type=c.memory_type,
        source_message_ids=list(dict.fromkeys(c.source_message_ids)),
        affected_domains=list(c.affected_domains),
        valid_from=valid_from,
        valid_until=c.valid_until,
        created_at=now,
        reason=reason,
    )


def _reinforce(m: Mem, c: Candidate) -> Plan:
    new = replace(
        m,
        source_message_ids=_add(m.source_message_ids, *c.source_message_ids),
        confidence=round(min(1.0, max(m.confidence, c.confidence) + 0.05), 4),
        importance=max(m.importance, min(5, max(1, int(c.importance)))),
    )
    if c.origin == USER_ORIGIN and m.origin != USER_ORIGIN:
        new.origin = USER_ORIGIN
    if c.valid_until is not None and m.status == QUERY_DEPENDENT:
        new.valid_until = max(m.valid_until or 0, c.valid_until)
    return Plan("reinforced", changes=[_change(m, new, "reinforced", "restated")], memory_id=m.id)


def plan_candidate(existing: list[Mem], c: Candidate, new_id: str, now: int) -> Plan:
    """Decide what ``c`` does to the rows of its scope (``existing``: every row of the scope that
    shares its slot or its normalised text; more rows are harmless)."""
    matching = [m for m in existing if _same(m, c)]
    srcs = set(c.source_message_ids)
    if srcs and any(srcs <= set(m.source_message_ids) for m in matching):
        return Plan(
            "duplicate", memory_id=next(m.id for m in matching if srcs <= set(m.source_message_ids))
        )
    if c.origin != USER_ORIGIN and any(m.status in (DISABLED, DELETED) for m in matching):
        return Plan("suppressed")
    live_same = [m for m in matching if m.status in LIVE]
    if live_same:
        # Prefer the row that is current (ACTIVE, then QUERY_DEPENDENT, then UNKNOWN_CURRENT).
        rank = {ACTIVE: 0, QUERY_DEPENDENT: 1, UNKNOWN_CURRENT: 2}
        target = sorted(live_same, key=lambda m: (rank[m.status], -m.order[0], m.id))[0]
        return _reinforce(target, c)
    if c.origin != USER_ORIGIN and any(m.status == STALE for m in matching) and c.slot:
        stale = [m for m in matching if m.status == STALE]
        if all(c.order <= m.order for m in stale):
            return Plan("duplicate", memory_id=stale[0].id)  # an old value said again, in old text

    if not c.slot:
        status = QUERY_DEPENDENT if c.time_bound else ACTIVE
        row = _new_row(c, new_id, now, status)
        return Plan("created", insert=row, memory_id=new_id)

    if c.time_bound:
        row = _new_row(c, new_id, now, QUERY_DEPENDENT, "time-bound")
        return Plan("created", insert=row, memory_id=new_id)

    rivals = [
        m
        for m in existing
        if m.slot == c.slot and m.status in (ACTIVE, UNKNOWN_CURRENT) and not _same(m, c)
    ]
    if not rivals:
        return Plan("created", insert=_new_row(c, new_id, now, ACTIVE), memory_id=new_id)

    if c.origin == USER_ORIGIN:
        return _supersede(rivals, _new_row(c, new_id, now, ACTIVE), "stated by the user")

    if any(m.origin == USER_ORIGIN for m in rivals):
        row = _new_row(c, new_id, now, UNKNOWN_CURRENT, "conflicts with a memory the user wrote")
        return Plan("conflict", insert=row, memory_id=new_id)

    return _plan_by_order(rivals, c, new_id, now)


def _plan_by_order(rivals: list[Mem], c: Candidate, new_id: str, now: int) -> Plan:
    """An extracted new value of a slot that has live ``rivals``: order (when each was said)
    decides which is current; with no order between them, neither is."""
    cand_order = c.order if c.order[0] else (now, c.order[1])
    current = [m for m in rivals if m.status == ACTIVE]
    if current and all(cand_order < m.order for m in current):
        # Older than what we know: record it as history, superseded by the current row.
        cur = max(current, key=lambda m: (m.order, m.id))
        row = _new_row(c, new_id, now, STALE, "older than the current value")
        row.superseded_by = [cur.id]
        row.valid_until = cur.valid_from if cur.valid_from is not None else cur.created_at
        new_cur = replace(cur, supersedes=_add(cur.supersedes, new_id))
        return Plan(
            "stale",
            insert=row,
            memory_id=new_id,
            changes=[_change(cur, new_cur, "linked", "an older value was recorded")],
        )
    if all(cand_order > m.order for m in rivals):
        return _supersede(rivals, _new_row(c, new_id, now, ACTIVE), "newer value")
    # No order between the values: neither can be called current.
    row = _new_row(c, new_id, now, UNKNOWN_CURRENT, "conflicting values with no order")
    changes = []
    for m in rivals:
        if m.status == ACTIVE:
            new = replace(m, status=UNKNOWN_CURRENT, reason="conflicting values with no order")
            changes.append(_change(m, new, "conflict", new.reason))
    return Plan("conflict", insert=row, changes=changes, memory_id=new_id)


def _supersede(rivals: list[Mem], row: Mem, reason: str) -> Plan:
    changes = []
    for m in sorted(rivals, key=lambda m: m.id):
        new = replace(
            m,
            status=STALE,
            superseded_by=_add(m.superseded_by, row.id),
            valid_until=row.valid_from
            if m.valid_until is None
            else min(m.valid_until, row.valid_from or m.valid_until),
            reason=f"superseded: {reason}",
        )
        changes.append(_change(m, new, "superseded", reason))
        row.supersedes = _add(row.supersedes, m.id)
    return Plan("superseded", insert=row, changes=changes, memory_id=row.id)


def plan_activate(existing: list[Mem], target: Mem, now: int, reason: str) -> list[Change]:
    """Changes to the *other* rows when ``target`` becomes ACTIVE by the user's hand: every other
    ACTIVE / UNKNOWN_CURRENT row of its slot is superseded by it (the caller updates ``target``,
    whose ``supersedes`` must gain the returned ids: see :func:`superseded_ids`)."""
    if not target.slot:
        return []
    changes = []
    for m in sorted(existing, key=lambda m: m.id):
        if m.id == target.id or m.slot != target.slot or m.status not in (ACTIVE, UNKNOWN_CURRENT):
            continue
        new = replace(
            m,
            status=STALE,
            superseded_by=_add(m.superseded_by, target.id),
            valid_until=m.valid_until if m.valid_until is not None else now,
            reason=f"superseded: {reason}",
        )
        changes.append(_change(m, new, "superseded", reason))
    return changes


def superseded_ids(changes: list[Change]) -> list[str]:
    return [ch.memory_id for ch in changes if ch.event == "superseded"]


def plan_purge(existing: list[Mem], purged: Mem) -> list[Change]:
    """Unlink ``purged`` from the rows it points at / is pointed at by."""
    changes = []
    linked = set(purged.supersedes) | set(purged.superseded_by)
    for m in sorted(existing, key=lambda m: m.id):
        if m.id == purged.id or (
            m.id not in linked
            and purged.id not in m.supersedes
            and purged.id not in m.superseded_by
        ):
            continue
        new = replace(
            m,
            supersedes=[x for x in m.supersedes if x != purged.id],
            superseded_by=[x for x in m.superseded_by if x != purged.id],
        )
        if new.status == STALE and not new.superseded_by:
            new.status = DISABLED
            new.reason = "its superseding memory was purged"
        if _diff(m, new)[1]:
            changes.append(_change(m, new, "unlinked", "a linked memory was purged"))
    return changes


def can_transition(old: str, new: str) -> bool:
    """Whether a user may move a memory from ``old`` to ``new`` by hand (PATCH ``status``)."""
    return new in USER_TRANSITIONS and old in USER_TRANSITIONS[new]


def apply(state: dict[str, Mem], plan_changes: list[Change], insert: Mem | None = None) -> None:
    """Apply changes to an in-memory state (tests, and the store's view of what it wrote)."""
    for ch in plan_changes:
        m = state[ch.memory_id]
        for k, v in ch.after.items():
            setattr(m, k, list(v) if isinstance(v, list) else v)
    if insert is not None:
        state[insert.id] = insert


def snapshot(m: Mem) -> dict:
    """The fields recorded as ``after`` of a ``created`` event."""
    return _snapshot(m)

"""The memory policy (pure): examples of each rule, and hypothesis over random operation sequences
checking the invariants the rules of memory/policy.py (its docstring) promise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatmem.memory import policy as pol
from chatmem.memory.policy import Candidate, Mem


def cand(
    text="",
    slot="",
    value="",
    *,
    src="m1",
    at=1000,
    origin="extracted",
    status="ACTIVE",
    until=None,
    **kw,
):
    return Candidate(
        memory_text=text or f"{slot}={value}",
        slot=slot,
        value=value,
        source_message_ids=(src,) if src else (),
        observed_at=at,
        valid_from=at,
        origin=origin,
        status=status,
        valid_until=until,
        **kw,
    )


def run(state: dict, c: Candidate, now=5000):
    existing = list(state.values())
    plan = pol.plan_candidate(existing, c, f"mem_{len(state):04d}", now)
    pol.apply(state, plan.changes, plan.insert)
    return plan


def test_new_value_supersedes_with_mirrored_links_and_closed_validity():
    s: dict = {}
    paris = run(s, cand("Lives in Paris", "home_location", "Paris", src="m1", at=1000))
    berlin = run(s, cand("Lives in Berlin", "home_location", "Berlin", src="m2", at=2000))
    assert paris.outcome == "created" and berlin.outcome == "superseded"
    p, b = s[paris.memory_id], s[berlin.memory_id]
    assert p.status == "STALE" and b.status == "ACTIVE"
    assert p.superseded_by == [b.id] and b.supersedes == [p.id]
    assert p.valid_until == 2000 and b.valid_from == 2000 and b.valid_until is None


def test_same_value_reinforces_and_same_source_is_a_noop():
    s: dict = {}
    a = run(s, cand("Lives in Paris", "home_location", "Paris", src="m1", confidence=0.7))
    b = run(s, cand("Lives in paris.", "home_location", "paris", src="m2", confidence=0.7))
    assert b.outcome == "reinforced" and b.memory_id == a.memory_id
    m = s[a.memory_id]
    assert m.source_message_ids == ["m1", "m2"] and m.confidence > 0.7
    again = run(s, cand("Lives in Paris", "home_location", "Paris", src="m2"))
    assert again.outcome == "duplicate" and again.changes == [] and again.insert is None


def test_no_slot_dedupes_by_normalised_text():
    s: dict = {}
    a = run(s, cand("Likes jazz", src="m1"))
    b = run(s, cand("  likes JAZZ! ", src="m2"))
    assert b.outcome == "reinforced" and b.memory_id == a.memory_id and len(s) == 1
    c = run(s, cand("Likes blues", src="m3"))
    assert c.outcome == "created" and len(s) == 2


def test_conflict_with_user_written_memory_never_overrides_it():
    s: dict = {}
    mine = run(s, cand("Lives in Oslo", "home_location", "Oslo", src="", origin="user", at=1000))
    other = run(s, cand("Lives in Rome", "home_location", "Rome", src="m9", at=9000))
    assert other.outcome == "conflict"
    assert s[mine.memory_id].status == "ACTIVE"
    assert s[other.memory_id].status == "UNKNOWN_CURRENT"


def test_user_written_candidate_supersedes_extracted():
    s: dict = {}
    a = run(s, cand("Lives in Rome", "home_location", "Rome", src="m1", at=5000))
    b = run(s, cand("Lives in Oslo", "home_location", "Oslo", src="", origin="user", at=1000))
    assert b.outcome == "superseded" and s[a.memory_id].status == "STALE"


def test_no_order_means_unknown_current_for_both():
    s: dict = {}
    a = run(s, cand("Lives in Rome", "home_location", "Rome", src="m1", at=1000))
    b = run(s, cand("Lives in Milan", "home_location", "Milan", src="m1", at=1000))
    assert b.outcome == "conflict"
    assert s[a.memory_id].status == s[b.memory_id].status == "UNKNOWN_CURRENT"


def test_older_statement_is_recorded_stale_behind_the_current_value():
    s: dict = {}
    a = run(s, cand("Lives in Berlin", "home_location", "Berlin", src="m5", at=5000))
    b = run(s, cand("Lives in Paris", "home_location", "Paris", src="m1", at=1000))
    assert b.outcome == "stale"
    assert s[a.memory_id].status == "ACTIVE" and s[b.memory_id].status == "STALE"
    assert s[b.memory_id].superseded_by == [a.memory_id] and s[a.memory_id].supersedes == [
        b.memory_id
    ]


def test_time_bound_fact_is_query_dependent_and_does_not_supersede():
    s: dict = {}
    home = run(s, cand("Lives in Berlin", "home_location", "Berlin", src="m1"))
    trip = run(
        s,
        cand(
            "In Tokyo this week",
            "home_location",
            "Tokyo",
            src="m2",
            at=2000,
            status="QUERY_DEPENDENT",
            until=9000,
        ),
    )
    assert s[home.memory_id].status == "ACTIVE"
    t = s[trip.memory_id]
    assert t.status == "QUERY_DEPENDENT" and t.valid_from == 2000 and t.valid_until == 9000


def test_disabled_or_deleted_memory_is_not_relearnt_from_text():
    s: dict = {}
    a = run(s, cand("Likes jazz", src="m1"))
    s[a.memory_id].status = "DISABLED"
    assert run(s, cand("Likes jazz", src="m2")).outcome == "suppressed"
    s[a.memory_id].status = "DELETED"
    assert run(s, cand("likes jazz", src="m3")).outcome == "suppressed"
    assert run(s, cand("Likes jazz", src="", origin="user")).outcome == "created"


def test_user_transitions():
    assert pol.can_transition("ACTIVE", "DISABLED") and pol.can_transition("DISABLED", "ACTIVE")
    assert pol.can_transition("UNKNOWN_CURRENT", "ACTIVE")
    assert not pol.can_transition("STALE", "ACTIVE")
    assert not pol.can_transition("ACTIVE", "STALE")
    assert not pol.can_transition("DISABLED", "QUERY_DEPENDENT")


def test_purge_unlinks_and_orphaned_stale_becomes_disabled():
    s: dict = {}
    a = run(s, cand("Lives in Paris", "home_location", "Paris", src="m1", at=1000))
    b = run(s, cand("Lives in Berlin", "home_location", "Berlin", src="m2", at=2000))
    changes = pol.plan_purge(list(s.values()), s[b.memory_id])
    pol.apply(s, changes)
    del s[b.memory_id]
    assert s[a.memory_id].superseded_by == [] and s[a.memory_id].status == "DISABLED"


# ── hypothesis: invariants over random sequences ────────────────────────────────────────────────

SLOTS = st.sampled_from(["", "home", "name"])
VALUES = st.sampled_from(["a", "b", "c"])
cand_op = st.tuples(
    st.just("cand"),
    SLOTS,
    VALUES,
    st.sampled_from(["extracted", "user"]),
    st.booleans(),
    st.integers(0, 4),
    st.integers(0, 5),
)
row_op = st.tuples(st.sampled_from(["activate", "disable", "delete", "purge"]), st.integers(0, 50))
OPS = st.lists(st.one_of(cand_op, cand_op, row_op), min_size=1, max_size=30)


def check_invariants(s: dict[str, Mem]) -> None:
    active_by_slot: dict[str, int] = {}
    for m in s.values():
        if m.status == "ACTIVE" and m.slot:
            active_by_slot[m.slot] = active_by_slot.get(m.slot, 0) + 1
        if m.status == "STALE":
            assert m.superseded_by, f"{m.id} is STALE without a superseding row"
        for o in m.superseded_by:
            assert o in s and m.id in s[o].supersedes, f"{m.id}.superseded_by {o} not mirrored"
        for o in m.supersedes:
            assert o in s and m.id in s[o].superseded_by, f"{m.id}.supersedes {o} not mirrored"
    assert all(n <= 1 for n in active_by_slot.values()), active_by_slot


def user_activate(s: dict, m: Mem, now: int) -> None:
    """What service.update_memory does when a user sets a memory ACTIVE."""
    target = Mem(**{**m.__dict__, "status": "ACTIVE"})
    others = pol.plan_activate(list(s.values()), target, now, "user")
    pol.apply(s, others)
    m.status = "ACTIVE"
    m.supersedes = m.supersedes + [i for i in pol.superseded_ids(others) if i not in m.supersedes]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_policy_invariants_hold_for_any_sequence(ops):
    s: dict[str, Mem] = {}
    now = 10_000
    for n, op in enumerate(ops):
        now += 1
        if op[0] == "cand":
            _, slot, value, origin, bound, at, src = op
            user_active_before = {
                m.id for m in s.values() if m.origin == "user" and m.status == "ACTIVE"
            }
            c = Candidate(
                memory_text=f"{slot or 'fact'} is {value}",
                slot=slot,
                value=value,
                origin=origin,
                observed_at=at * 100 + 1,
                valid_from=at * 100 + 1,
                source_message_ids=(f"m{src}",),
                status="QUERY_DEPENDENT" if bound else "ACTIVE",
                valid_until=(at * 100 + 500) if bound else None,
            )
            plan = pol.plan_candidate(list(s.values()), c, f"mem_{n:03d}", now)
            pol.apply(s, plan.changes, plan.insert)
            if origin == "extracted":
                for mid in user_active_before:
                    assert s[mid].status == "ACTIVE", "an extracted fact overrode a user's memory"
            if bound and plan.insert is not None:
                assert plan.insert.status == "QUERY_DEPENDENT"
                assert plan.insert.valid_until == c.valid_until
        else:
            if not s:
                continue
            kind, idx = op
            m = sorted(s.values(), key=lambda x: x.id)[idx % len(s)]
            if kind == "activate" and pol.can_transition(m.status, "ACTIVE"):
                user_activate(s, m, now)
            elif kind == "disable" and pol.can_transition(m.status, "DISABLED"):
                m.status = "DISABLED"
            elif kind == "delete":
                m.status = "DELETED"
            elif kind == "purge":
                pol.apply(s, pol.plan_purge(list(s.values()), m))
                del s[m.id]
        check_invariants(s)

"""Pure tree rules (dag.py) and block projections (blocks.py): no database, no framework."""

from __future__ import annotations

import random

import pytest

from chatmem.conversations import blocks as blk
from chatmem.conversations import dag
from chatmem.conversations.dag import Node


def test_branch_info_orders_siblings_as_given():
    info = dag.branch_info(["a", "c"], {"a": None, "c": "a"}, {None: ["a", "b"], "a": ["x", "c"]})
    assert info["a"] == {"branch_index": 0, "branch_count": 2, "sibling_ids": ["a", "b"]}
    assert info["c"] == {"branch_index": 1, "branch_count": 2, "sibling_ids": ["x", "c"]}


def _kids(*nodes: Node) -> dict[str, list[Node]]:
    out: dict[str, list[Node]] = {}
    for n in nodes:
        out.setdefault(n.parent_id, []).append(n)
    return out


def test_round_of_an_answer_is_its_question_and_every_variant():
    q = Node("q", "p", "user")
    a1, a2 = Node("a1", "q", "assistant"), Node("a2", "q", "assistant")
    later1, later2 = Node("u1", "a1", "user"), Node("u2", "a2", "user")
    side = Node("uq", "q", "user")  # log mode: a user message straight under the question
    plan = dag.plan_round_delete(a2, q, _kids(a1, a2, later1, later2, side))
    assert plan.delete_ids == {"q", "a1", "a2"}
    assert plan.reparent == {"u1": "p", "u2": "p", "uq": "p"}
    assert plan.new_parent == "p"


def test_round_of_a_question_and_of_odd_shapes():
    q = Node("q", None, "user")
    a = Node("a", "q", "assistant")
    plan = dag.plan_round_delete(q, None, _kids(a, Node("n", "a", "user")))
    assert plan.delete_ids == {"q", "a"} and plan.reparent == {"n": None}
    assert plan.new_parent is None
    # an assistant under an assistant (log mode) is a round of its own
    lone = Node("b", "a", "assistant")
    plan = dag.plan_round_delete(lone, a, _kids(Node("c", "b", "user")))
    assert plan.delete_ids == {"b"} and plan.reparent == {"c": "a"}


def test_streaming_in():
    assert dag.streaming_in(
        [Node("a", None, "user"), Node("b", "a", "assistant", "streaming")]
    ) == ["b"]


def test_blocks_normalize_and_visible_text():
    assert blk.normalize("hi") == [{"kind": "text", "text": "hi"}]
    out = blk.normalize(
        [
            {"type": "text", "text": "a"},
            {"kind": "thinking", "text": "t"},
            {"kind": "tool_output", "output": "o"},
            {"kind": "text", "text": "b"},
        ]
    )
    assert [b["kind"] for b in out] == ["text", "thinking", "tool_output", "text"]
    assert blk.visible_text(out) == "ab" and blk.thinking_text(out) == "t"
    assert blk.visible_text(None) == ""
    for bad in (
        [],
        [1],
        [{"kind": "nope"}],
        [{"kind": "text"}],
        [{"kind": "thinking", "text": 3}],
        5,
        None,
        {"kind": "text", "text": "x"},
    ):
        with pytest.raises(blk.BlockError):
            blk.normalize(bad)


def _grow(parents: list[int | None]):
    """Jump pointers of a tree given as parent indices (each parent before its children)."""
    depth, jump = [], []
    for p in parents:
        if p is None:
            depth.append(0)
            jump.append((None, None))
            continue
        pj = jump[p]
        jj = jump[int(pj[0])] if pj[0] is not None else (None, None)
        j = dag.jump_for(str(p), depth[p], pj, jj)
        depth.append(depth[p] + 1)
        jump.append(j)
    return depth, jump


def _ancestor(parents, depth, jump, v: int, d: int) -> tuple[int, int]:
    """(the ancestor of v at depth d, steps taken) with dag.level_ancestor_step."""
    steps = 0
    while depth[v] > d:
        nxt = dag.level_ancestor_step(depth[v], str(parents[v]), jump[v], d)
        v = int(nxt)
        steps += 1
    return v, steps


def test_jump_pointers_reach_any_ancestor_in_log_steps():
    """A 10,000-deep chain: every pointer is an ancestor at its depth, and the walk from the leaf
    to any depth takes O(log depth) steps (what makes a switch near the root cheap)."""
    n = 10_000
    parents: list[int | None] = [None, *range(n - 1)]
    depth, jump = _grow(parents)
    for v in range(n):
        j, jd = jump[v]
        assert j is None or (int(j) < v and depth[int(j)] == jd)  # in a chain: an ancestor
    worst = 0
    for d in range(0, n, 37):
        a, steps = _ancestor(parents, depth, jump, n - 1, d)
        assert a == d
        worst = max(worst, steps)
    assert worst <= 3 * n.bit_length()


def test_jump_pointers_on_random_trees():
    """On random trees the walk lands on the true ancestor (checked against parent steps)."""
    rnd = random.Random(18)
    for _ in range(30):
        parents: list[int | None] = [None]
        for i in range(1, 300):
            parents.append(rnd.choice([i - 1, i - 1, i - 1, rnd.randrange(i)]))
        depth, jump = _grow(parents)
        for _ in range(50):
            v = rnd.randrange(len(parents))
            d = rnd.randint(0, depth[v])
            slow = v
            while depth[slow] > d:
                slow = parents[slow]
            assert _ancestor(parents, depth, jump, v, d)[0] == slow


def test_fill_jumps_matches_one_by_one():
    """Bulk rows (imports, shared copies) get the pointers appends would have given them."""
    rnd = random.Random(7)
    parents: list[int | None] = [None]
    for i in range(1, 200):
        parents.append(rnd.choice([i - 1, rnd.randrange(i), None if rnd.random() < 0.02 else 0]))
    depth, jump = _grow(parents)
    rows = [{"id": str(i), "parent_id": None if p is None else str(p), "depth": depth[i]}
            for i, p in enumerate(parents)]  # fmt: skip
    dag.fill_jumps(rows)
    assert [(r["jump_id"], r["jump_depth"]) for r in rows] == jump


def test_walk_after_round_deletions_with_skipped_positions():
    """Deleting leaves what lies below alone: positions skip and pointers into the deleted
    messages dangle (treated as absent). The walk still lands on the deepest ancestor at the
    target position or above, new appends below the gaps still get pointers, and the walk from
    the leaf stays short."""
    rnd = random.Random(4)
    n = 3000
    parents: list[int | None] = [None, *range(n - 1)]
    depth, jump = _grow(parents)
    gone: set[int] = set()
    for v in rnd.sample(range(1, n - 1), 150):  # delete single messages: children move up
        for ch in range(n):
            if parents[ch] == v:
                parents[ch] = parents[v]
        gone.add(v)

    def alive(j):
        return j if j[0] is not None and int(j[0]) not in gone else (None, None)

    for _ in range(500):  # appends under the leaf, as _child_place builds them
        p = len(parents) - 1
        pj = jump[p]
        jj = alive(jump[int(pj[0])]) if alive(pj)[0] is not None else (None, None)
        jump.append(dag.jump_for(str(p), depth[p], pj, jj))
        depth.append(depth[p] + 1)
        parents.append(p)
    leaf = len(parents) - 1
    worst = 0
    for d in range(0, depth[leaf], 11):
        v, steps = leaf, 0
        while depth[v] > d:
            v = int(dag.level_ancestor_step(depth[v], str(parents[v]), alive(jump[v]), d))
            steps += 1
        slow = leaf
        while depth[slow] > d:
            slow = parents[slow]
        assert v == slow and v not in gone
        worst = max(worst, steps)
    assert worst <= 4 * leaf.bit_length(), worst

"""Pure tree logic for message DAGs: sibling positions and what a round deletion touches.

No database here: the store fetches the few rows involved and asks these functions what to do, so
the rules are unit-testable and identical on both dialects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    id: str
    parent_id: str | None
    role: str
    status: str = "complete"


def branch_info(
    path_ids: Sequence[str],
    parent_of: Mapping[str, str | None],
    children: Mapping[str | None, Sequence[str]],
) -> dict[str, dict]:
    """For each message on the path: its siblings (ordered oldest first) and its index among them.

    ``children`` maps a parent id (None for roots) to its children's ids in creation order.
    """
    out = {}
    for mid in path_ids:
        sibs = list(children.get(parent_of[mid], ()))
        if mid not in sibs:  # defensive: a row always is its own sibling
            sibs.append(mid)
        out[mid] = {"branch_index": sibs.index(mid), "branch_count": len(sibs), "sibling_ids": sibs}
    return out


@dataclass(frozen=True)
class RoundPlan:
    """What deleting a round does: rows to delete, and children to move (id → new parent)."""

    delete_ids: frozenset[str]
    reparent: dict[str, str | None]
    depth_shift: dict[str, int]  # moved child id → how many levels its subtree rises
    new_parent: str | None


def plan_round_delete(
    target: Node, parent: Node | None, children_of: Mapping[str, Sequence[Node]]
) -> RoundPlan:
    """The round of ``target``: the question and all its answer variants.

    - target is a user message → the round is it plus its assistant children;
    - target is an assistant message whose parent is a user message → that question and all its
      assistant children (every variant);
    - otherwise (log-mode shapes such as an assistant root) → the target alone.
    Children of round members that are not in the round move to the round's parent, so later
    turns survive; their subtrees rise by as many levels as were removed above them.
    """
    if target.role == "assistant" and parent is not None and parent.role == "user":
        question = parent
    else:
        question = target
    members = {question.id: 0}
    if question.role == "user":
        for ch in children_of.get(question.id, ()):
            if ch.role == "assistant":
                members[ch.id] = 1
    if question.id != target.id and target.id not in members:
        members[target.id] = 1
    reparent: dict[str, str | None] = {}
    shift: dict[str, int] = {}
    for mid, level in members.items():
        for ch in children_of.get(mid, ()):
            if ch.id not in members:
                reparent[ch.id] = question.parent_id
                shift[ch.id] = level + 1
    return RoundPlan(frozenset(members), reparent, shift, question.parent_id)


def streaming_in(nodes: Iterable[Node]) -> list[str]:
    return [n.id for n in nodes if n.status == "streaming"]

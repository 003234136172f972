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
    """What deleting a round does: rows to delete, and children to move (id → new parent).
    Nothing below a moved child changes: ``depth`` is a position, and a moved subtree keeps its
    positions (the path skips the deleted ones)."""

    delete_ids: frozenset[str]
    reparent: dict[str, str | None]
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
    turns survive.
    """
    if target.role == "assistant" and parent is not None and parent.role == "user":
        question = parent
    else:
        question = target
    members = [question.id]
    if question.role == "user":
        members += [ch.id for ch in children_of.get(question.id, ()) if ch.role == "assistant"]
    if target.id not in members:
        members.append(target.id)
    reparent: dict[str, str | None] = {}
    for mid in members:
        for ch in children_of.get(mid, ()):
            if ch.id not in members:
                reparent[ch.id] = question.parent_id
    return RoundPlan(frozenset(members), reparent, question.parent_id)


def streaming_in(nodes: Iterable[Node]) -> list[str]:
    return [n.id for n in nodes if n.status == "streaming"]


#: (id, depth) of a message's jump pointer; ``None`` id = the message itself
Jump = tuple[str | None, int | None]


def jump_for(parent: str, parent_depth: int, parent_jump: Jump, jump_jump: Jump) -> Jump:
    """The jump pointer of a new child of ``parent``: skew-binary jumps (Myers 1983).

    Each message points at an ancestor; from any message, ancestors are reached in O(log depth)
    jumps (``level_ancestor_step`` is one step of the walk). ``parent_jump`` is the parent's pointer and
    ``jump_jump`` the pointer of that ancestor; a ``None`` id means "itself" (roots, rows written
    before migration 0018), so an old row acts like a root for the pointers built below it. The
    rule: when the parent's jump and its jump's jump span equal lengths, jump over both, else
    point at the parent.
    """
    j, jd = parent_jump if parent_jump[0] is not None else (parent, parent_depth)
    jj, jjd = jump_jump if jump_jump[0] is not None else (j, jd)
    if jd is not None and jjd is not None and parent_depth - jd == jd - jjd:
        return jj, jjd
    return parent, parent_depth


def level_ancestor_step(
    depth: int, parent_id: str | None, jump: Jump, target_depth: int
) -> str | None:
    """The next message on the way up from a message at ``depth`` to its ancestor at
    ``target_depth``: the jump when it does not overshoot (and is not the message itself), else
    the parent. The SQL walk in ``tree_store.newest_descendant`` applies the same rule, and also
    takes the parent when the jump names a message a round deletion removed (an absent pointer).

    Depths here are positions (docs/data-model.md): they grow from parent to child and may skip
    where a round was deleted; the walk needs nothing more. Skipped positions only make the
    pointers built below them less even (spans are measured in positions), never wrong."""
    jid, jd = jump
    if jid is not None and jd is not None and target_depth <= jd < depth:
        return jid
    return parent_id


def chain_places(
    parent: str | None, parent_depth: int, known: Mapping[str, Jump], ids: Sequence[str]
) -> list[dict]:
    """``depth``, ``jump_id`` and ``jump_depth`` of new messages ``ids`` written as a chain below
    ``parent`` (None: the first is a root), each the child of the one before — as ``jump_for``
    gives them one by one. ``known`` maps an existing ancestor to its pointer: the parent's, its
    jump's and that one's jump are all the rule can need for two new levels (a missing entry is
    a message without a pointer, as a missing row is to ``jump_for``'s callers)."""
    jumps: dict[str, Jump] = dict(known)
    places: list[dict] = []
    p, pd = parent, parent_depth
    for mid in ids:
        j: Jump = (None, None)
        if p is not None:
            pj = jumps.get(p, (None, None))
            jj = jumps.get(pj[0], (None, None)) if pj[0] is not None else (None, None)
            j = jump_for(p, pd, pj, jj)
        depth = 0 if p is None else pd + 1
        places.append({"depth": depth, "jump_id": j[0], "jump_depth": j[1]})
        jumps[mid] = j
        p, pd = mid, depth
    return places


def fill_jumps(rows: list[dict]) -> None:
    """Set ``jump_id``/``jump_depth`` on message rows written in bulk (imports, shared copies),
    as ``jump_for`` would one by one. ``rows`` have ``id``, ``parent_id`` and ``depth`` (a
    position: greater than the parent's), parents before children; a parent outside ``rows`` counts as a message without a pointer
    (the child then points at its parent: still an ancestor, so still correct)."""
    by_id: dict[str, dict] = {}
    for r in rows:
        pid = r["parent_id"]
        if pid is None:
            r["jump_id"] = r["jump_depth"] = None
        else:
            p = by_id.get(pid)
            pj: Jump = (p["jump_id"], p["jump_depth"]) if p else (None, None)
            j = by_id.get(pj[0]) if pj[0] is not None else None
            jj: Jump = (j["jump_id"], j["jump_depth"]) if j else (None, None)
            pd = p["depth"] if p else r["depth"] - 1
            r["jump_id"], r["jump_depth"] = jump_for(pid, pd, pj, jj)
        by_id[r["id"]] = r

"""Repair a source conversation's message tree into rows chatmem can insert (pure).

Exports are not clean trees. The rules, applied in this order:

1. **duplicate ids**: the first node with an id wins; later ones are skipped (``duplicate_id``);
2. **skipped nodes** (hidden system prompts, empty nodes, …): dropped, their children move up to
   the nearest kept ancestor, so a hidden root never orphans the conversation;
3. **missing parents**: a node whose parent is not in the export becomes a root (a warning);
4. **cycles**: nodes no root reaches (a parent loop) are re-rooted at the earliest one in source
   order, so every node is kept and the result is a forest;
5. **tool folding**: a step marked ``fold`` (a tool call or its output) is merged into its parent
   assistant message when that parent has no other child — one visible assistant turn, as the
   source shows it; with siblings it stays a message of its own (an assistant message);
6. **roles**: ``tool`` becomes ``assistant``; ``system`` messages that are not skipped are kept
   as assistant-visible notes only if the parser marked them so (parsers skip them by default);
7. **dates**: a node without a date takes its parent's, else the conversation's, else ``now``;
8. **active leaf**: the source's current node, mapped through skips and merges; when it resolves
   to a node with children, the newest child is followed down to a leaf; without one, the newest
   leaf of the whole tree.

Siblings keep the source order (date, then position), which chatmem reads as branch order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .model import ConversationError, Plan, PlannedMessage, SourceConversation, SourceMessage


@dataclass
class _Tree:
    """The working state of one repair: kept nodes, their parents and children, dates."""

    conv: SourceConversation
    skipped: Counter
    warnings: list[str]
    order: dict[str, int] = field(default_factory=dict)
    gone: dict[str, SourceMessage] = field(default_factory=dict)
    kept: dict[str, SourceMessage] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)
    date: dict[str, int] = field(default_factory=dict)
    topo: list[str] = field(default_factory=list)
    into: dict[str, str] = field(default_factory=dict)  # merged id → the message it joined
    merged: dict[str, list[str]] = field(default_factory=dict)

    def key(self, mid: str) -> tuple[int, int]:
        return (self.date[mid], self.order[mid])

    def resolve(self, pid: str | None) -> str | None:
        """The nearest ancestor of a node id that is kept (skipped ones pass their parent on)."""
        seen = set()
        while pid is not None and pid in self.gone and pid not in seen:
            seen.add(pid)
            pid = self.gone[pid].parent_id
        return pid


def _dedupe_and_drop(w: _Tree) -> None:
    """1–2: first node of an id wins; skipped and empty nodes are set aside."""
    nodes: dict[str, SourceMessage] = {}
    for m in w.conv.messages:
        if not m.id or m.id in nodes:
            w.skipped["missing_id" if not m.id else "duplicate_id"] += 1
            continue
        nodes[m.id] = m
        w.order[m.id] = len(w.order)
    for mid, m in nodes.items():
        if m.skip or not m.blocks:
            w.gone[mid] = m
            w.skipped[m.skip or "empty"] += 1
        else:
            w.kept[mid] = m


def _link(w: _Tree) -> None:
    """3: parents through skipped nodes; a parent not in the export makes a root."""
    missing = 0
    for mid, m in w.kept.items():
        p = w.resolve(m.parent_id)
        if p is not None and (p not in w.kept or p == mid):
            missing += 1
            p = None
        w.parent[mid] = p
        w.children.setdefault(p, []).append(mid)
    if missing:
        w.warnings.append(f"{missing} message(s) whose parent is not in the export became roots")


def _break_cycles(w: _Tree) -> None:
    """4: whatever no root reaches sits on a parent loop: re-root its earliest node."""
    reached: set[str] = set()

    def walk(start: str) -> None:
        stack = [start]
        while stack:
            n = stack.pop()
            if n not in reached:
                reached.add(n)
                stack.extend(w.children.get(n, ()))

    for r in w.children.get(None, ()):
        walk(r)
    broken = 0
    while len(reached) < len(w.kept):
        first = min((mid for mid in w.kept if mid not in reached), key=w.order.__getitem__)
        w.children[w.parent[first]].remove(first)
        w.parent[first] = None
        w.children.setdefault(None, []).append(first)
        walk(first)
        broken += 1
    if broken:
        w.warnings.append(f"{broken} parent cycle(s) broken")


def _date(w: _Tree, now: int) -> None:
    """7: dates parents first (a missing one is inherited), and a parents-first order."""
    base = w.conv.created_at if w.conv.created_at is not None else now
    queue = []
    for mid in w.children.get(None, ()):
        d = w.kept[mid].created_at
        w.date[mid] = d if d is not None else base
        queue.append(mid)
    while queue:
        mid = queue.pop()
        w.topo.append(mid)
        for ch in w.children.get(mid, ()):
            d = w.kept[ch].created_at
            w.date[ch] = d if d is not None else w.date[mid]
            queue.append(ch)


def _fold(w: _Tree, role: dict[str, str], blocks: dict[str, list[dict]]) -> None:
    """5: a ``fold`` step joins its parent assistant message when it is that parent's only
    child; the merged node's children become the parent's."""
    for mid in w.topo:
        p = w.parent[mid]
        if p is not None and p in w.into:
            p = w.parent[mid] = w.into[p]
        if w.kept[mid].fold and p is not None and role[p] == "assistant":
            if len(w.children.get(p, ())) != 1:
                continue
            blocks[p].extend(blocks[mid])
            w.merged.setdefault(p, []).append(mid)
            w.merged[p].extend(w.merged.pop(mid, ()))
            w.into[mid] = p
            kids = w.children.pop(mid, [])
            w.children[p] = kids
            for k in kids:
                w.parent[k] = p


def _emit(w: _Tree, role: dict[str, str], blocks: dict[str, list[dict]]) -> tuple[list, dict]:
    """The planned rows, parents first, siblings in source order; and children by parent."""
    kids_of: dict[str | None, list[str]] = {}
    for mid in w.topo:
        if mid not in w.into:
            kids_of.setdefault(w.parent[mid], []).append(mid)
    for k in kids_of:
        kids_of[k].sort(key=w.key)
    out: list[PlannedMessage] = []
    depth: dict[str, int] = {}
    stack = list(reversed(kids_of.get(None, [])))
    while stack:
        mid = stack.pop()
        p, m = w.parent[mid], w.kept[mid]
        depth[mid] = 0 if p is None else depth[p] + 1
        out.append(
            PlannedMessage(
                source_id=mid,
                parent_source_id=p,
                role=role[mid],
                blocks=blocks[mid],
                created_at=w.date[mid],
                model=m.model,
                status=m.status,
                depth=depth[mid],
                merged_ids=w.merged.get(mid, []),
                metadata=m.metadata,
            )
        )
        stack.extend(reversed(kids_of.get(mid, [])))
    return out, kids_of


def _leaf(w: _Tree, kids_of: dict[str | None, list[str]], planned: set[str]) -> str:
    """8: the source's current node through skips and merges, down to a leaf; else the newest
    leaf."""
    leaf = w.conv.current_id
    if leaf is not None and leaf in w.gone:
        leaf = w.resolve(leaf)
    if leaf is not None:
        leaf = w.into.get(leaf, leaf)
    if leaf is None or leaf not in planned:
        leaf = max((mid for mid in planned if not kids_of.get(mid)), key=w.key)
    while kids_of.get(leaf):
        leaf = kids_of[leaf][-1]
    return leaf


def plan(conv: SourceConversation, *, now: int) -> Plan:
    w = _Tree(conv, Counter(conv.skipped), list(conv.warnings))
    _dedupe_and_drop(w)
    _link(w)
    _break_cycles(w)
    _date(w, now)
    for k in w.children:
        w.children[k].sort(key=w.key)
    role = {
        mid: "assistant" if m.role in ("tool", "system") else m.role for mid, m in w.kept.items()
    }
    blocks = {mid: list(m.blocks) for mid, m in w.kept.items()}
    _fold(w, role, blocks)
    out, kids_of = _emit(w, role, blocks)
    if not out:
        raise ConversationError("empty", "the conversation has no visible message")
    planned = {m.source_id for m in out}
    leaf = _leaf(w, kids_of, planned)
    newest = max(m.created_at for m in out)
    created = conv.created_at if conv.created_at is not None else min(m.created_at for m in out)
    updated = max(conv.updated_at or 0, newest, created)
    return Plan(conv, out, leaf, w.skipped, w.warnings, created, updated)

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

from .model import ConversationError, Plan, PlannedMessage, SourceConversation, SourceMessage


def plan(conv: SourceConversation, *, now: int) -> Plan:
    skipped = Counter(conv.skipped)
    warnings = list(conv.warnings)
    nodes: dict[str, SourceMessage] = {}
    order: dict[str, int] = {}
    for m in conv.messages:
        if not m.id:
            skipped["missing_id"] += 1
            continue
        if m.id in nodes:
            skipped["duplicate_id"] += 1
            continue
        nodes[m.id] = m
        order[m.id] = len(order)

    # 2. skipped nodes: remember where their children go
    gone = {mid: m for mid, m in nodes.items() if m.skip or (not m.blocks and m.role != "user")}
    for m in gone.values():
        skipped[m.skip or "empty"] += 1
    for mid, m in list(nodes.items()):
        if not m.blocks and m.role == "user" and mid not in gone:
            gone[mid] = m
            skipped["empty"] += 1
    kept = {mid: m for mid, m in nodes.items() if mid not in gone}

    def resolve(pid: str | None) -> str | None:
        seen = set()
        while pid is not None and pid in gone and pid not in seen:
            seen.add(pid)
            pid = gone[pid].parent_id
        return pid

    parent: dict[str, str | None] = {}
    missing = 0
    for mid, m in kept.items():
        p = resolve(m.parent_id)
        if p is not None and (p not in kept or p == mid):
            missing += 1
            p = None
        parent[mid] = p
    if missing:
        warnings.append(f"{missing} message(s) whose parent is not in the export became roots")

    children: dict[str | None, list[str]] = {}
    for mid in kept:
        children.setdefault(parent[mid], []).append(mid)

    # 4. cycles: whatever no root reaches is re-rooted
    reached: set[str] = set()

    def walk(start: str) -> None:
        stack = [start]
        while stack:
            n = stack.pop()
            if n in reached:
                continue
            reached.add(n)
            stack.extend(children.get(n, ()))

    for r in children.get(None, ()):
        walk(r)
    broken = 0
    while len(reached) < len(kept):
        first = min((mid for mid in kept if mid not in reached), key=order.__getitem__)
        children[parent[first]].remove(first)
        parent[first] = None
        children.setdefault(None, []).append(first)
        walk(first)
        broken += 1
    if broken:
        warnings.append(f"{broken} parent cycle(s) broken")

    # 7. dates, parents first
    date: dict[str, int] = {}
    base = conv.created_at if conv.created_at is not None else now

    def sort_key(mid: str) -> tuple:
        return (date[mid], order[mid])

    roots = list(children.get(None, ()))
    for mid in roots:
        d = kept[mid].created_at
        date[mid] = d if d is not None else base
    queue = list(roots)
    topo: list[str] = []
    while queue:
        mid = queue.pop()
        topo.append(mid)
        for ch in children.get(mid, ()):
            d = kept[ch].created_at
            date[ch] = d if d is not None else date[mid]
            queue.append(ch)
    for k in children:
        children[k].sort(key=sort_key)

    # 5. folding, top-down: a merged node's children become its parent's
    into: dict[str, str] = {}  # merged id → the message it became part of
    blocks = {mid: list(kept[mid].blocks) for mid in kept}
    role = {
        mid: ("assistant" if kept[mid].role in ("tool", "system") else kept[mid].role)
        for mid in kept
    }
    merged: dict[str, list[str]] = {}
    for mid in topo:
        m = kept[mid]
        p = parent[mid]
        if p is not None and p in into:
            p = into[p]
            parent[mid] = p
        if m.fold and p is not None and role[p] == "assistant" and len(children.get(p, ())) == 1:
            blocks[p].extend(blocks[mid])
            merged.setdefault(p, []).append(mid)
            merged[p].extend(merged.pop(mid, ()))
            into[mid] = p
            kids = children.pop(mid, [])
            children[p] = kids
            for k in kids:
                parent[k] = p
    # (children lists may still name merged ids as parents: rebuilt below)
    final = [mid for mid in topo if mid not in into]
    kids_of: dict[str | None, list[str]] = {}
    for mid in final:
        kids_of.setdefault(parent[mid], []).append(mid)
    for k in kids_of:
        kids_of[k].sort(key=sort_key)

    out: list[PlannedMessage] = []
    depth: dict[str, int] = {}
    stack = list(reversed(kids_of.get(None, [])))
    while stack:
        mid = stack.pop()
        p = parent[mid]
        depth[mid] = 0 if p is None else depth[p] + 1
        m = kept[mid]
        out.append(
            PlannedMessage(
                source_id=mid,
                parent_source_id=p,
                role=role[mid],
                blocks=blocks[mid],
                created_at=date[mid],
                model=m.model,
                status=m.status,
                depth=depth[mid],
                merged_ids=merged.get(mid, []),
                metadata=m.metadata,
            )
        )
        stack.extend(reversed(kids_of.get(mid, [])))
    if not out:
        raise ConversationError("empty", "the conversation has no visible message")

    # 8. active leaf
    leaf = conv.current_id
    if leaf is not None and leaf in gone:
        leaf = resolve(leaf)
    if leaf is not None:
        leaf = into.get(leaf, leaf)
    if leaf is None or leaf not in depth:
        leaf = max(
            (mid for mid in final if not kids_of.get(mid)), key=lambda mid: (date[mid], order[mid])
        )
    while kids_of.get(leaf):
        leaf = kids_of[leaf][-1]
    newest = max(date[mid] for mid in final)
    created = conv.created_at if conv.created_at is not None else min(date[mid] for mid in final)
    updated = max(conv.updated_at or 0, newest, created)
    return Plan(conv, out, leaf, skipped, warnings, created, updated)

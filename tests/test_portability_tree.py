"""The tree repair (pure) on arbitrary broken trees: whatever the parents say — missing, loops,
duplicates, skipped or empty nodes, tool steps to fold — the plan is a forest in insertion order
that accounts for every source node exactly once, with a leaf for the active branch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmem.portability import tree
from chatmem.portability.model import ConversationError, SourceConversation, SourceMessage

IDS = [f"n{i}" for i in range(12)]

node = st.builds(
    lambda mid, parent, role, empty, skip, fold, t: SourceMessage(
        mid,
        parent,
        role,
        [] if empty else [{"kind": "text", "text": mid}],
        t,
        skip="hidden" if skip else None,
        fold=fold,
    ),
    st.sampled_from(IDS),
    st.one_of(st.none(), st.sampled_from([*IDS, "ghost"])),
    st.sampled_from(["user", "assistant", "tool"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.one_of(st.none(), st.integers(1_600_000_000_000, 1_700_000_000_000)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(node, max_size=20), st.one_of(st.none(), st.sampled_from(IDS)))
def test_plan_is_a_forest_accounting_for_every_node(nodes, current):
    conv = SourceConversation("c", "t", nodes, current_id=current)
    first: dict[str, SourceMessage] = {}
    for m in nodes:
        first.setdefault(m.id, m)  # the first node of an id wins
    visible = [m for m in first.values() if m.blocks and not m.skip]
    if not visible:
        with pytest.raises(ConversationError):
            tree.plan(conv, now=1_650_000_000_000)
        return
    p = tree.plan(conv, now=1_650_000_000_000)
    seen: dict[str, int] = {}
    children: set[str] = set()
    for m in p.messages:
        assert m.source_id not in seen and m.role in ("user", "assistant")
        if m.parent_source_id is None:
            assert m.depth == 0
        else:
            assert m.parent_source_id in seen  # parents first
            assert m.depth == seen[m.parent_source_id] + 1
            children.add(m.parent_source_id)
        seen[m.source_id] = m.depth
        assert m.blocks and isinstance(m.created_at, int)
    merged = [mid for m in p.messages for mid in m.merged_ids]
    assert not set(merged) & set(seen)
    assert len(seen) + len(merged) + sum(p.skipped.values()) == len(nodes)
    assert p.leaf_source_id in seen and p.leaf_source_id not in children

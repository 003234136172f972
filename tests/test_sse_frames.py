"""generation/sse.frame: an event's ``data`` line is ``json.dumps(data, ensure_ascii=False,
separators=(",", ":"))`` byte for byte (it reuses one encoder instead of building one per event)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from chatmem.generation import sse

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES, st.one_of(st.none(), st.integers(min_value=1)))
def test_frame_data_is_json_dumps(data, seq):
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"id: {seq}\n" if seq is not None else ""
    assert sse.frame({"seq": seq, "type": "text_delta", "data": data}) == (
        f"{head}event: text_delta\ndata: {expected}\n\n"
    )

"""Path (conversations/paths.py): the shared-base + short-tail representation answers exactly
what a plain list of the path's ids would, whatever sequence of turns and branch switches built it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from chatmem.conversations import paths
from chatmem.conversations.paths import Path, flat


def _check(p: Path, ref: list[str]) -> None:
    assert list(p.ids) == ref and len(p) == len(ref) and p.leaf == (ref[-1] if ref else None)
    for i, mid in enumerate(ref):
        assert p.index(mid) == i and mid in p and p.at(i) == mid
        assert p.neighbour(mid, "user") == (ref[i + 1] if i + 1 < len(ref) else None)
        assert p.neighbour(mid, "assistant") == (ref[i - 1] if i else None)
    assert "nope" not in p and p.neighbour("nope", "user") is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40)), max_size=30))
def test_extended_paths_equal_plain_lists(steps):
    paths.TAIL_MAX, saved = 16, paths.TAIL_MAX  # small, so flattening happens too
    try:
        ref = [f"m{i}" for i in range(10)]
        p, n = flat(ref), 10
        for frac, grow in steps:
            keep = int(len(ref) * frac)  # a branch switch keeps a prefix (a new turn keeps all)
            more = [f"m{n + i}" for i in range(grow)]
            n += grow
            p, ref = p.extended(keep, more), ref[:keep] + more
            _check(p, ref)
    finally:
        paths.TAIL_MAX = saved


def test_an_older_path_is_not_disturbed_by_later_ones():
    base = flat(["a", "b", "c"])
    first = base.extended(3, ["d"])
    second = first.extended(2, ["x"])
    assert list(first.ids) == ["a", "b", "c", "d"] and "x" not in first
    assert list(second.ids) == ["a", "b", "x"] and "c" not in second and "d" not in second

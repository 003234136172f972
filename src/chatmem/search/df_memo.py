"""Per-process memo of recall's document frequencies: a common word of a conversation is counted
once in a while, not every turn (pure: no database, the caller counts what it lacks).

Why: counting how many of a conversation's messages hold a word reads one index entry per such
message up to the cap (``index.frequencies``; on PostgreSQL a heap row each) — at 10,000 messages
hundreds for a common word, where a 100-message conversation has at most 100 — and the same
words come back turn after turn: the question's function words, and a short follow-up's previous
turn, which was the question before.

A count is a slowly moving number: after ``g`` more messages a word in ``d`` messages is in at
most ``d + g``. So a count is reused while the conversation has changed by at most
``STALE_SHARE`` of it (``|size now − size then| ≤ 10 % of d``: at most 10 % off, far less than
BM25's idf notices — the estimates of ``rank.sampled_df`` are much rougher) and for at most
``MAX_AGE_S`` (an edit changes counts without changing the size). Consequently only common
words' counts are kept (``d ≥ 1 / STALE_SHARE``): a rare word's count moves with every message
that says it, and counting it costs little. A count that stopped at its cap (``d = cap``: "at
least cap") answers requests with a cap no higher. Bounded: ``max_entries`` counts, least
recently used out.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

STALE_SHARE = 0.1
MAX_AGE_S = 900.0
MAX_ENTRIES = 50_000


class CountMemo:
    """{(scope, term): (count, its cap, the scope's size, when)} with the reuse rules above."""

    def __init__(
        self, max_entries: int = MAX_ENTRIES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries = max_entries
        self._clock = clock
        self._counts: OrderedDict[tuple, tuple[int, int, int, float]] = OrderedDict()

    def get(self, scope: Hashable, term: str, *, cap: int, size: int) -> int | None:
        """The count of ``term`` in ``scope`` (now ``size`` messages), capped at ``cap``, when
        a kept one is still good; None when it must be counted."""
        key = (scope, term)
        kept = self._counts.get(key)
        if kept is None:
            return None
        df, kept_cap, kept_size, at = kept
        if abs(size - kept_size) > STALE_SHARE * df or self._clock() - at > MAX_AGE_S:
            del self._counts[key]
            return None
        if df >= kept_cap and cap > kept_cap:  # "at least kept_cap" says nothing beyond it
            return None
        self._counts.move_to_end(key)
        return min(df, cap)

    def put(self, scope: Hashable, term: str, df: int, *, cap: int, size: int) -> None:
        """Keep a count just made (``df``, counted up to ``cap`` in ``size`` messages), if it is
        common enough to be worth keeping."""
        if df * STALE_SHARE < 1:
            return
        key = (scope, term)
        self._counts[key] = (df, cap, size, self._clock())
        self._counts.move_to_end(key)
        while len(self._counts) > self.max_entries:
            self._counts.popitem(last=False)

"""An in-process sliding-window rate limiter (pure; the clock is injected).

Used for the unauthenticated share endpoint (60 reads per minute per client IP). It is per
process on purpose: it exists to blunt scraping of public tokens, not to meter paid usage, and a
replica-local window needs no shared store.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class SlidingWindow:
    """At most ``limit`` hits per ``window_ms`` per key."""

    def __init__(
        self,
        limit: int,
        window_ms: int,
        *,
        clock: Callable[[], int] | None = None,
        max_keys: int = 100_000,
    ) -> None:
        self.limit = limit
        self.window_ms = window_ms
        self._clock = clock or (lambda: time.monotonic_ns() // 1_000_000)
        self._hits: dict[str, deque[int]] = {}
        self._lock = threading.Lock()
        self._max_keys = max_keys

    def hit(self, key: str) -> int:
        """Record a hit; 0 when allowed, else the milliseconds until one will be allowed."""
        now = self._clock()
        cutoff = now - self.window_ms
        with self._lock:
            q = self._hits.get(key)
            if q is None:
                if len(self._hits) >= self._max_keys:
                    self._evict(cutoff)
                q = self._hits[key] = deque()
            while q and q[0] <= cutoff:
                q.popleft()
            if len(q) >= self.limit:
                return max(1, q[0] - cutoff)
            q.append(now)
            return 0

    def _evict(self, cutoff: int) -> None:
        """Drop keys whose hits have all expired (bounds memory under many distinct clients)."""
        for k in [k for k, q in self._hits.items() if not q or q[-1] <= cutoff]:
            del self._hits[k]

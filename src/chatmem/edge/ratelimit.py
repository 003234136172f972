"""Rate limits for the routes an attacker hammers without credentials (login, the one-time login
link, public shares), on the ``limits`` library's moving window.

Why in-process: the limits protect a replica's CPU (every login costs an argon2 hash) and blunt
password guessing and token scraping; counting in memory costs nothing per request, needs no
shared store (chatmem runs without Redis) and cannot itself be turned into a database load by
the flood it is meant to stop. What that means with N replicas behind a load balancer: each
replica counts on its own, so the cluster-wide ceiling is N × the configured rate (with sticky
routing by client IP it is the configured rate per IP). A deployment that needs one global limit
puts it at the proxy as well. Limits reset when a process restarts.

``Throttle.check`` answers how long the caller must wait (0 = go on) without counting;
``Throttle.hit`` counts one event and answers the same. ``retry_after_s`` rounds up, so a client
that waits as told is let through.
"""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


class Throttle:
    """One named limit (e.g. ``"5/minute;20/hour"``) over keys (an IP, an account)."""

    def __init__(self, name: str, rates: str, storage: MemoryStorage | None = None) -> None:
        self.name = name
        self.items: list[RateLimitItem] = parse_many(rates) if rates else []
        self._limiter = MovingWindowRateLimiter(storage or MemoryStorage())

    def _wait(self, key: str) -> int:
        now = time.time()
        wait = 0.0
        for item in self.items:
            if not self._limiter.test(item, self.name, key):
                stats = self._limiter.get_window_stats(item, self.name, key)
                wait = max(wait, stats.reset_time - now)
        return max(1, math.ceil(wait)) if wait > 0 else 0

    def check(self, key: str) -> int:
        """Seconds until ``key`` may act again (0 = now), without counting anything."""
        return self._wait(key) if self.items else 0

    def hit(self, key: str) -> int:
        """Count one event for ``key``; 0 when it was within every limit, else the wait."""
        if not self.items:
            return 0
        wait = self._wait(key)
        if wait:
            return wait
        for item in self.items:
            self._limiter.hit(item, self.name, key)
        return 0

    def clear(self, key: str) -> None:
        for item in self.items:
            self._limiter.clear(item, self.name, key)

"""Time as integer milliseconds UTC, the one unit every table uses (leases included)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000

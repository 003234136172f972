"""CPU-bound work off the event loop.

One process serves every request from one event loop, so a function that computes for tens of
milliseconds (argon2 password hashing, tokenising a large text, decoding an image) stalls every
other request for as long — 40 concurrent logins froze ``/api/health`` for seconds. ``run_cpu``
runs such a function on a small thread pool sized to the machine's cores: the loop stays free,
and the pool bounds how much of that work runs at once (argon2 also needs 64 MiB per hash), so a
flood of logins queues instead of exhausting memory. argon2-cffi and tiktoken release the GIL
while they compute; pure-Python work still yields it every ``sys.getswitchinterval()``.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


@functools.cache
def _executor() -> ThreadPoolExecutor:
    """One pool per process, made on first use (never at import)."""
    return ThreadPoolExecutor(
        max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="chatmem-cpu"
    )


async def run_cpu(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the CPU pool; the caller's loop keeps serving meanwhile."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))

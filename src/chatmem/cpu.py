"""CPU-bound work off the event loop.

One process serves every request from one event loop, so a function that computes for tens of
milliseconds (argon2 password hashing, tokenising a large text, decoding an image) stalls every
other request for as long — 40 concurrent logins froze ``/api/health`` for seconds. ``run_cpu``
runs such a function on a small thread pool (the cores less one): the loop stays free,
and the pool bounds how much of that work runs at once (argon2 also needs 64 MiB per hash), so a
flood of logins queues instead of exhausting memory. argon2-cffi and tiktoken release the GIL
while they compute; pure-Python work still yields it every ``sys.getswitchinterval()``.

Two pools: ``run_cpu`` (password hashing) and ``run_text`` (tokenising and assembling a large
context). A flood of logins queues dozens of argon2 hashes; on one shared pool a user's turn would
wait behind all of them for its context. Each pool has the cores less one, so both together never
take every core from the event loop for long (they release the GIL while computing).

The password pool's threads also run at a lower scheduling priority (``nice`` +10 for that thread
alone, Linux): on a busy machine the kernel then gives the event loop's thread the core first, so
a login flood slows the logins (which queue anyway) instead of every other request — measured by
``bench/hardening.py --only logins`` (``/api/health`` p95 under 40 concurrent bad logins).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

#: how much nicer than the process the password pool's threads run (0..19 on Linux)
CPU_POOL_NICENESS = 10


def _lower_priority() -> None:
    """Pool thread initializer: this thread (not the process) yields the core to the loop first.

    On Linux ``setpriority(PRIO_PROCESS, tid)`` applies to one thread. Elsewhere, or where the
    call is refused, the pool simply runs at the process's priority."""
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + CPU_POOL_NICENESS))


@functools.cache
def _executor(name: str = "cpu") -> ThreadPoolExecutor:
    """One pool per name and process, made on first use (never at import)."""
    # one core is left to the event loop: on 2 cores, 40 concurrent logins hash one at a time
    return ThreadPoolExecutor(
        max_workers=max(1, (os.cpu_count() or 2) - 1),
        thread_name_prefix=f"chatmem-{name}",
        initializer=_lower_priority if name == "cpu" else None,
    )


async def run_cpu(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the CPU pool; the caller's loop keeps serving meanwhile."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))


async def run_text(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the text pool (tokenising, context assembly): not behind a
    queue of password hashes."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor("text"), functools.partial(fn, *args, **kwargs))

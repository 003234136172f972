"""Who a bearer key or a session cookie belongs to, remembered for a few seconds by this process.

Why it exists: every request resolved its caller with a statement (users ⨝ api_keys, or
users ⨝ web_sessions) — two of a demo turn's statements, for an answer that almost never changes.

The staleness bound (issue 18 left it to us): an entry is used for at most ``ttl_s`` seconds
(``CHATMEM_AUTH_CACHE_S``, default 5; 0 turns the cache off) and never after its session expires.
Every write that changes what a lookup answers — revoking a key, disabling, deleting or changing a
user (settings, role, name, password), logging out, ending sessions — runs a function of
``auth/store.py`` (account deletion: ``portability/store.purge_user``) that calls ``changed()``,
which voids every entry of every cache in this process before the write commits. So the process
that makes a change is exact from then on; another process (a replica, or ``chatmem keys revoke``
run from the command line) stops honouring a revoked key, a disabled user or an ended session,
and sees new settings, within ``ttl_s`` — the one window this cache opens.

Keys are the SHA-256 digests the lookups already use (no secret is kept in clear), the size is
bounded (full → emptied), and an entry holds the frozen ``Principal`` handed to routes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .models import Principal


class _Epoch:
    """Bumped by ``changed()``; an entry from an older epoch is never used."""

    value = 0


def changed() -> None:
    """Auth state is being changed in this process: every cached caller is looked up again."""
    _Epoch.value += 1


class PrincipalCache:
    def __init__(
        self, ttl_s: float, *, size: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s = max(0.0, ttl_s)
        self.size = size
        self.clock = clock
        self._entries: dict[str, tuple[Principal, int, float]] = {}

    def get(self, digest: str) -> Principal | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        principal, epoch, until = entry
        if epoch != _Epoch.value or self.clock() >= until:
            self._entries.pop(digest, None)
            return None
        return principal

    def put(
        self, digest: str, principal: Principal, *, epoch: int, expires_in_s: float | None = None
    ) -> None:
        """Remember ``principal`` as read at ``epoch`` (taken before the read: a change that
        committed meanwhile voids it), for ``ttl_s`` or until ``expires_in_s`` (a session)."""
        if self.ttl_s <= 0 or epoch != _Epoch.value:
            return
        ttl = self.ttl_s if expires_in_s is None else min(self.ttl_s, expires_in_s)
        if ttl <= 0:
            return
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[digest] = (principal, epoch, self.clock() + ttl)

    def clear(self) -> None:
        self._entries.clear()


def epoch() -> int:
    return _Epoch.value

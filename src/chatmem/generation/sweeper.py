"""The sweeper: ends turns whose process died, and prunes old event logs.

Runs in every server and worker process (registered by routes.install). Every quarter of
``lease_ttl_s`` (leases.Timing: so a dead turn ends within the TTL) it finds ``streaming`` assistant rows with no live generation lease — their
heartbeat stopped, so the process running them is gone — and ends them as ``error`` /
``generation_interrupted`` with the partial text they had flushed, appending a closing ``error``
event so that resuming clients finish instead of waiting. (A turn the user asked to stop ends as
complete/``stopped`` instead.) Several sweepers may run at once: the conditional update in
finalize.end_message lets exactly one of them end a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy import exists, func, select

from ..db import schema as t
from ..db.clock import now_ms
from . import events as ev
from . import leases
from .finalize import end_orphan

log = logging.getLogger("chatmem.generation.sweeper")
M = t.messages.c
L = t.conversation_generation_leases.c


def _live_lease(now: int):
    return exists(
        select(L.owner_token).where(
            func.substr(L.owner_token, 1, func.length(M.id) + 1) == M.id + ":", L.expires_at > now
        )
    )


class Sweeper:
    def __init__(self, rt) -> None:
        self.rt = rt
        self._task: asyncio.Task | None = None
        self._runs = 0
        self.sweep_s = leases.Timing.of(rt.settings).sweep_s

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="generation-sweeper")

    async def stop(self) -> None:
        """Stop between sweeps (never inside a database call, which could strand a connection)."""
        if self._task is not None:
            self._stopping.set()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.sweep_once()
                self._runs += 1
                if self._runs % 12 == 1:
                    await self.prune_once()
            except Exception:
                log.exception("sweep failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.sweep_s)

    async def sweep_once(self) -> list[str]:
        """End orphaned turns; returns the ids it ended."""
        rt = self.rt
        now = now_ms()
        mine = rt.generation.runners
        async with rt.db.read() as c:
            q = (
                select(M.id)
                .where(M.status == "streaming", ~_live_lease(now))
                .order_by(M.created_at)
                .limit(200)
            )
            candidates = [r.id for r in (await c.execute(q)).all() if r.id not in mine]
        ended = []
        for mid in candidates:
            async with rt.db.write() as c:
                if await leases.live_token(c, mid, now_ms()) is not None:
                    continue  # renewed meanwhile
                token = (
                    await c.execute(
                        select(L.owner_token).where(
                            L.owner_token.startswith(mid + ":", autoescape=True)
                        )
                    )
                ).scalar()
                stopped = bool(token and token.endswith(leases.STOP))
                if await end_orphan(c, mid, stopped=stopped) is not None:
                    ended.append(mid)
        if ended:
            log.warning("ended %d interrupted turn(s): %s", len(ended), ", ".join(ended))
            rt.telemetry.swept(turns_ended=len(ended))
        return ended

    async def prune_once(self) -> int:
        """Delete the event logs of finished turns older than ``event_retention_s``."""
        async with self.rt.db.write() as c:
            n = await ev.prune(c, now_ms() - self.rt.settings.event_retention_s * 1000)
        self.rt.telemetry.swept(events_pruned=n)
        return n

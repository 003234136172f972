"""The sweeper: ends turns whose process died, and prunes old event logs.

Runs in every server and worker process (a runtime service). Every quarter of ``lease_ttl_s``
(leases.Timing: so a dead turn ends within the TTL) it finds ``streaming`` assistant rows with no
live generation lease — their heartbeat stopped, so the process running them is gone — and ends
them as ``error`` / ``generation_interrupted`` with the partial text they had flushed, appending a
closing ``error`` event so that resuming clients finish instead of waiting. (A turn the user asked
to stop ends as complete/``stopped`` instead.) Several sweepers may run at once: the conditional
update in finalize.end_message lets exactly one of them end a row.

Both scans are index-driven and bounded, so their cost follows the running turns, not the
history: the sweep reads the partial index on streaming rows (``idx_messages_streaming``) and
checks each one's lease by the lease table's primary key; pruning walks the oldest event rows by
``ix_stream_events_created`` in batches of ``PRUNE_BATCH`` rows, each its own short write
transaction with a pause between them, so it never holds SQLite's write lock for more than a few
milliseconds. Pruning is a deployment-wide chore: only the process holding the ``prune-events``
lease (db/singleton.py) does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from ..db import singleton
from ..db.clock import now_ms
from . import events as ev
from . import leases, store
from .finalize import end_orphan

log = logging.getLogger("chatmem.generation.sweeper")

#: Rows deleted per pruning transaction, the pause between two, and the most one run may take.
PRUNE_BATCH = 500
PRUNE_PAUSE_S = 0.01
PRUNE_BUDGET_S = 30.0
PRUNE_LEASE = "prune-events"


@dataclass
class PruneRun:
    """What one pruning run did (bench/scale.py reports the longest write)."""

    deleted: int = 0
    batches: int = 0
    longest_write_s: float = 0.0


class Sweeper:
    def __init__(self, rt) -> None:
        self.rt = rt
        self._task: asyncio.Task | None = None
        self._runs = 0
        self._stopping = asyncio.Event()
        self.sweep_s = leases.Timing.of(rt.settings).sweep_s
        self.last_prune = PruneRun()

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="generation-sweeper")

    async def stop(self) -> None:
        """Stop between sweeps (never inside a database call, which could strand a connection)."""
        if self._task is not None:
            self._stopping.set()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with contextlib.suppress(Exception):  # hand pruning over now rather than at expiry
            async with self.rt.db.write() as c:
                await singleton.release(c, PRUNE_LEASE, self.rt.instance_id)

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
        async with rt.db.read_once() as c:  # one statement: no transaction around it
            rows = await store.orphans(c, now)
        candidates = [r.id for r in rows if r.id not in mine]
        ended = []
        for mid in candidates:
            async with rt.db.write() as c:
                if await leases.live_token(c, mid, now_ms()) is not None:
                    continue  # renewed meanwhile
                token = await store.lease_token_of(c, mid)
                stopped = bool(token and token.endswith(leases.STOP))
                if await end_orphan(c, mid, stopped=stopped) is not None:
                    ended.append(mid)
        if ended:
            log.warning("ended %d interrupted turn(s): %s", len(ended), ", ".join(ended))
            rt.telemetry.swept(turns_ended=len(ended))
        return ended

    async def prune_once(self) -> int:
        """Delete the event logs of finished turns older than ``event_retention_s``, in batches,
        if this process holds the pruning lease; returns the rows deleted."""
        db = self.rt.db
        lease_ms = int(max(self.sweep_s * 12 * 3, PRUNE_BUDGET_S * 2) * 1000)
        async with db.write() as c:
            if not await singleton.hold(c, PRUNE_LEASE, self.rt.instance_id, lease_ms):
                return 0
        run = PruneRun()
        cutoff = now_ms() - self.rt.settings.event_retention_s * 1000
        deadline = time.monotonic() + PRUNE_BUDGET_S
        after = None
        while not self._stopping.is_set():
            async with db.read() as c:
                keys = await ev.oldest_rows(c, cutoff, after, PRUNE_BATCH)
            if not keys:
                break
            after = keys[-1]
            t0 = time.perf_counter()
            async with db.write() as c:
                run.deleted += await ev.prune_rows(c, keys, cutoff)
            run.longest_write_s = max(run.longest_write_s, time.perf_counter() - t0)
            run.batches += 1
            if len(keys) < PRUNE_BATCH or time.monotonic() > deadline:
                break
            await asyncio.sleep(PRUNE_PAUSE_S)  # let the turns' writes in between batches
        self.last_prune = run
        self.rt.telemetry.swept(events_pruned=run.deleted)
        return run.deleted

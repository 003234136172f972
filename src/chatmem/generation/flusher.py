"""The flush promise: text a client has been shown is in the database within
``flush_interval_ms`` (250 ms), however many turns this process runs.

A client sees each event the moment the turn produces it (from memory); the database sees it at
the next flush. One flusher per process writes the pending events and partial rows of *all* its
running turns in one transaction every half interval — so an event waits at most half an
interval for its flush and the other half is left for the commit. (One transaction per turn per
tick made 30 concurrent turns 30 writers queueing for SQLite's single write lock, and an event
seen by a client could wait a second before it was saved.) A turn ends with its own final write
(turns.py), which includes whatever the flusher had not written yet.

A transient database failure is retried at once (db/faults.py) and the events stay pending, so
the next tick writes them; repeats are harmless (event inserts ignore rows already stored).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy import update

from ..conversations import blocks as blk
from ..db import faults
from ..db import schema as t
from ..db.clock import now_ms
from . import events as ev

log = logging.getLogger("chatmem.generation.flusher")
M = t.messages.c


class Flusher:
    def __init__(self, rt, state) -> None:
        self.rt, self.state = rt, state
        self.tick_s = rt.settings.flush_interval_ms / 2000
        self._task: asyncio.Task | None = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="generation-flusher")

    async def stop(self) -> None:
        """Stop at a wait, never inside a database call (which could strand a connection)."""
        if self._task is not None:
            self._stopping.set()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            started = loop.time()
            try:
                await self.flush_all()
            except Exception as e:  # the events stay pending: the next tick writes them
                if faults.is_transient(e):
                    log.warning("flush postponed: database unavailable (%s)", type(e).__name__)
                else:
                    log.exception("flush failed (the events stay pending for the next one)")
            wait = max(0.0, self.tick_s - (loop.time() - started))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), wait)

    async def flush_all(self) -> int:
        """Write every running turn's pending events and partial row; returns how many turns."""
        batch = [
            (r, r.live.pending(), r.blocks())
            for r in list(self.state.runners.values())
            if not r.finalizing and r.live.pending()
        ]
        if not batch:
            return 0

        async def write() -> list:
            lost, rows, now = [], [], now_ms()
            async with self.rt.db.write() as c:
                for runner, pending, blocks in batch:
                    mid = runner.spec.assistant_message_id
                    res = await c.execute(
                        update(t.messages)
                        .where(M.id == mid, M.status == "streaming")
                        .values(blocks=blocks, search_text=blk.visible_text(blocks))
                    )
                    if not res.rowcount:  # swept or ended elsewhere: stop writing it
                        lost.append(runner)
                        continue
                    rows += ev.event_rows(mid, pending, now)
                await ev.insert_rows(c, rows)
            return lost

        lost = await faults.retrying(write, what="flush", attempts=3, base_s=0.02, max_s=0.1)
        for runner, pending, _ in batch:
            if runner in lost:
                runner.request_stop("lost")
            else:
                runner.live.flushed = max(runner.live.flushed, pending[-1]["seq"])
        return len(batch)

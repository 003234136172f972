"""The flush promise: text a client is shown is already in the database.

A running turn's events are held in memory (events.LiveLog) and given to subscribers only once
durable. One flusher per process group-commits the pending events and partial rows of *all*
its running turns in one transaction: it starts a flush ``flush_coalesce_ms`` after the first
pending event (gathering what arrives meanwhile) and, under load, back to back — each flush
taking everything produced during the previous one. On a healthy machine that adds a few
milliseconds to a token's way to the screen; on a starved one (a loaded host, a slow disk) text
arrives in larger batches, but a SIGKILL can never take back text a client has seen — which a
"flush every 250 ms, show at once" design cannot promise (an event loop woken 750 ms late or a
commit taking seconds broke it under 30 streams). ``flush_interval_ms`` bounds the wait while
nothing new arrives (retries after a database failure).

The event log is the record; the message row's partial ``blocks`` (and ``search_text``, always
their projection) is a reader's view of it, rewritten at most every ``flush_interval_ms`` —
rewriting every streaming row's whole text on every flush made each flush as costly as the
answers were long. A turn that dies is ended from its log (finalize.end_orphan rebuilds the
blocks from the durable events), so every event a client saw is in the answer it finds later.
A flush also renews its turns' leases (one statement): a turn busy streaming is alive by
definition, and on a starved host the heartbeat alone came late enough for a live turn to be
swept. Only leases last renewed ``flush_interval_ms`` or more ago are renewed (a lease is held
for half of ``lease_ttl_s``): most flushes of a fast stream, and a turn's first one, skip it.

A transient database failure is retried at once (db/faults.py) and the events stay pending for
the next flush; repeats are harmless (event inserts ignore rows already stored). A turn ends
with its own final write (turns.py), which includes whatever was not flushed yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from ..db import faults
from ..db.clock import now_ms
from . import events as ev
from . import leases, store

log = logging.getLogger("chatmem.generation.flusher")


class Flusher:
    def __init__(self, db, settings, state) -> None:
        self.db, self.state = db, state
        self.coalesce_s = settings.flush_coalesce_ms / 1000
        self.idle_s = settings.flush_interval_ms / 1000
        self.row_ms = settings.flush_interval_ms
        self.hold_ms = leases.Timing.of(settings).hold_ms
        #: a flush renews the leases of its turns last renewed at least this long ago (a turn
        #: streaming fast is flushed every few milliseconds; its lease is held for seconds)
        self.renew_every_s = settings.flush_interval_ms / 1000
        self._task: asyncio.Task | None = None
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """There are pending events (called by LiveLog.add)."""
        self._wake.set()

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="generation-flusher")

    async def stop(self) -> None:
        """Stop at a wait, never inside a database call (which could strand a connection)."""
        if self._task is not None:
            self._stopping.set()
            self._wake.set()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            # no turn running: nothing can be pending, so sleep until a first event pokes it (an
            # idle process no longer wakes four times a second for nothing)
            idle_s = self.idle_s if self.state.runners else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(idle_s):  # a timer, not a task per wait
                    await self._wake.wait()
            if self._stopping.is_set():
                return
            self._wake.clear()
            if self.coalesce_s:
                await asyncio.sleep(self.coalesce_s)
            try:
                await self.flush_all()
            except Exception as e:  # the events stay pending: the next flush writes them
                if faults.is_transient(e):
                    log.warning("flush postponed: database unavailable (%s)", type(e).__name__)
                else:
                    log.exception("flush failed (the events stay pending for the next one)")

    def _held(self, runner, now: int) -> bool:
        """A turn's first event (``message_start``) waits for its model call (events.LiveLog
        ``held``; a flush woken for another turn would otherwise write it alone, just before a
        quick answer's final write) — at most ``flush_interval_ms``, the idle flush's bound."""
        return runner.live.held and now - runner.spec.started_ms < self.row_ms

    def _row_blocks(self, runner, now: int) -> list | None:
        """The partial blocks to write to the turn's row, or None: rewritten at most every
        ``flush_interval_ms``, and never before there is content (a flush of the first event
        alone leaves the placeholder's empty blocks, so the next flush's text is written)."""
        if now - runner.row_written_ms < self.row_ms:
            return None
        if not (runner.text or runner.thinking or runner.tool_calls):
            return None
        return runner.blocks()

    async def flush_all(self) -> int:
        """Write every running turn's pending events and partial row; returns how many turns."""
        now = now_ms()
        batch = [
            (r, r.live.pending(), self._row_blocks(r, now))
            for r in list(self.state.runners.values())
            if not r.finalizing and r.live.pending() and not self._held(r, now)
        ]
        if not batch:
            return 0
        started = time.monotonic()
        due = {r for r, _, _ in batch if started - r.last_renew >= self.renew_every_s}

        async def write() -> list:
            lost, rows = [], []
            async with self.db.write() as c:
                # the rows without new blocks: one no-op write of them all says which still stream
                touched = [r.spec.assistant_message_id for r, _, b in batch if b is None]
                streaming = await store.hold_streaming(c, touched)
                for runner, pending, blocks in batch:
                    mid = runner.spec.assistant_message_id
                    ok = (
                        mid in streaming
                        if blocks is None
                        else await store.write_partial(c, mid, blocks)
                    )
                    if not ok:  # swept or ended elsewhere
                        lost.append(runner)
                        continue
                    rows += ev.event_rows(mid, pending, now)
                await ev.insert_rows(c, rows)
                live = [r.spec.token for r, _, _ in batch if r in due and r not in lost]
                await leases.renew_many(c, live, self.hold_ms, now)
            return lost

        lost = await faults.retrying(write, what="flush", attempts=3, base_s=0.02, max_s=0.1)
        for runner, pending, blocks in batch:
            if runner in lost:
                runner.request_stop("lost")
                continue
            runner.live.mark_flushed(pending[-1]["seq"])
            if runner in due:
                runner.last_renew = started
            if blocks is not None:
                runner.row_written_ms = now
        return len(batch)

"""Following a turn's event log: what ``service.follow`` and the resume routes serve — the log
replayed after a given seq and followed live (from memory when this process runs the turn, else
by polling the database), a ``snapshot`` for pruned logs and crashed processes' gaps, and whether
a client already has everything. Split from generation/service.py (starting, regenerating and
stopping turns), which re-exports its public names."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ..auth.models import Principal
from ..conversations import store
from . import events as ev
from . import store as gstore
from .finalize import message_public
from .sse import TERMINAL


async def check_message(rt, principal: Principal, conv_id: str, message_id: str):
    """404 unless the conversation is the caller's and holds the message."""
    async with rt.db.read() as c:
        await store.get_conversation(c, principal.id, conv_id)
        return await store.get_message(c, conv_id, message_id)


async def fully_delivered(rt, message_id: str, after_seq: int) -> bool:
    """Whether a resume after ``after_seq`` has nothing to send: the message is finished and
    ``after_seq`` is its closing event (answered 204, so a standard EventSource stops
    reconnecting). A closing event the sweeper wrote (``recovered``) still gets its snapshot."""
    async with rt.db.read() as c:
        # status first: under READ COMMITTED a row seen ended has its closing event committed
        status = await gstore.status_of(c, message_id)
        if status is None or status == "streaming" or after_seq <= 0:
            return False
        hi, last = await _last_event_in(c, message_id)
    if hi != after_seq or not last or last[0]["type"] not in TERMINAL:
        return False
    return not (last[0]["data"] or {}).get("recovered")


async def _snapshot_end(rt, message_id: str) -> list[dict]:
    async with rt.db.read() as c:
        row = await gstore.message_row(c, message_id)
        msg = await message_public(c, row)
    out: list[dict[str, Any]] = [{"seq": None, "type": "snapshot", "data": {"message": msg}}]
    if row.status == "error":
        block: dict[str, Any] = next((b for b in row.blocks or () if b.get("kind") == "error"), {})
        code = block.get("code") or row.error or "error"
        out.append(
            {
                "seq": None,
                "type": "error",
                "data": {"code": code, "message": block.get("text") or row.error or code},
            }
        )
    else:
        out.append(
            {"seq": None, "type": "done", "data": {"stop_reason": row.stop_reason, "message": msg}}
        )
    return out


async def _shielded(coro):
    """Run a database read to completion even if the follower is cancelled (client gone):
    a task cancelled inside a driver call can strand its pooled connection mid-transaction."""
    return await asyncio.shield(asyncio.ensure_future(coro))


async def _poll(rt, message_id: str, seq: int, first: bool):
    async with rt.db.read() as c:
        # The status is read BEFORE the events: under READ COMMITTED (PostgreSQL) every statement
        # sees its own snapshot, so a row seen ended guarantees its closing event is in ``rows``.
        status = await gstore.status_of(c, message_id)
        rows = await ev.read_after(c, message_id, seq)
        lo = None
        if first:
            lo, _ = await ev.bounds(c, message_id)
    return rows, status, lo


async def _last_event_in(c, message_id: str):
    _, hi = await ev.bounds(c, message_id)
    return hi, await ev.read_after(c, message_id, (hi or 1) - 1, 1)


async def _last_event(rt, message_id: str):
    async with rt.db.read() as c:
        return await _last_event_in(c, message_id)


async def _after_finish(rt, message_id: str, seq: int) -> tuple[bool, list[dict] | None]:
    """A follower that is at ``seq`` of a message no longer streaming: fetch again (events were
    committed since its read), or the last batch to send (None: nothing more) before it ends."""
    hi, last = await _shielded(_last_event(rt, message_id))
    recovered = bool(
        last and last[0]["type"] in TERMINAL and (last[0]["data"] or {}).get("recovered")
    )
    if (hi or 0) < seq or (recovered and (hi or 0) <= seq):
        # the client may have seen events a crashed process never saved (numbered like the ones
        # the sweeper wrote after them): give it the saved message and the closing event, without
        # sequence numbers
        return False, await _shielded(_snapshot_end(rt, message_id))
    if (hi or 0) > seq:
        return True, None
    if not (last and last[0]["type"] in TERMINAL):
        # finished without a closing event (a log-mode message): close cleanly
        return False, (await _shielded(_snapshot_end(rt, message_id)))[1:]
    return False, None


async def follow_batches(
    rt, message_id: str, after_seq: int = 0, *, idle_s: float | None = None
) -> AsyncIterator[list[dict]]:
    """Like ``follow`` but yields lists of events (what the SSE writer sends in one write); with
    ``idle_s``, also an empty list whenever that long passed without events (keep-alive)."""
    g = rt.generation
    seq = max(0, after_seq)
    live = g.live.get(message_id)
    if live is not None:
        async for batch in live.batches(seq, idle_s):
            yield batch
            if not batch:
                continue
            seq = batch[-1]["seq"]
            if batch[-1]["type"] in TERMINAL:
                return
        # the turn lost its lease here: the rest (the sweeper's error) is in the database
    poll = rt.settings.follow_poll_ms / 1000
    first = True
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    while True:
        rows, status, lo = await _shielded(_poll(rt, message_id, seq, first))
        if rows:
            quiet_since = loop.time()
        if first:
            first = False
            if status is None:
                return  # deleted meanwhile
            if status != "streaming" and (lo is None or lo > seq + 1):
                yield await _shielded(_snapshot_end(rt, message_id))  # the log was pruned
                return
        if rows:
            seq = rows[-1]["seq"]
            for i, r in enumerate(rows):
                if r["type"] in TERMINAL:
                    yield rows[: i + 1]
                    return
            yield rows
            continue
        if status is None:
            return  # the message was deleted
        if status != "streaming":
            refetch, last_batch = await _after_finish(rt, message_id, seq)
            if refetch:
                continue  # events committed since our read: fetch them (they end with the terminal)
            if last_batch is not None:
                yield last_batch
            return
        live = g.live.get(message_id)
        if live is not None:  # the turn started here after all (unlikely): switch to memory
            async for batch in follow_batches(rt, message_id, seq, idle_s=idle_s):
                yield batch
            return
        if idle_s is not None and loop.time() - quiet_since >= idle_s:
            quiet_since = loop.time()
            yield []
        await asyncio.sleep(poll)


async def follow(rt, message_id: str, after_seq: int = 0) -> AsyncGenerator[dict, None]:
    """Events after ``after_seq``: replay then live, ending after ``done`` or ``error``."""
    async for batch in follow_batches(rt, message_id, after_seq):
        for e in batch:
            yield e

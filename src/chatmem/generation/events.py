"""The per-message event log: in memory for live subscribers, durable in ``stream_events``.

A running turn owns a ``LiveLog``: every event gets the next sequence number (from 1) and wakes the
subscribers in this process at once; the turn flushes new events (with the partial message) to the
database at least every ``flush_interval_ms``, so a reader on another replica, or after a restart,
sees them. The store functions below read and write the durable side; ``follow`` in service.py
stitches the two together (a replica that is not running the turn polls the log every
``follow_poll_ms``).
"""

from __future__ import annotations

import asyncio
import functools

from sqlalchemy import and_, bindparam, delete, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t
from ..db.clock import now_ms

E = t.stream_events.c

#: event types whose consecutive pending events are one event (their ``text`` joined)
MERGED = frozenset({"text_delta", "thinking_delta"})


class LiveLog:
    """Events of one running turn, held in memory; ``events[i]`` has ``seq == i + 1``.

    Subscribers are given only **durable** events (``events[:flushed]``): a client is never shown
    text that a crash could take back. The process's flusher (flusher.py) group-commits pending
    events within milliseconds (``on_pending`` tells it there are some), so this costs a few
    milliseconds of latency on a healthy machine — and on an overloaded one, text arrives in
    larger batches instead of being shown and then lost.

    A text (or thinking) delta that follows a pending one of its kind, not yet taken by a flush,
    is added to it (``MERGED``): nobody has seen that event, and whatever one flush writes is
    shown at once anyway, so a flush's text is one event — one SSE frame, one stored row —
    instead of one per token (a demo turn of 40 tokens: ~5 events, not ~45). Streaming looks
    the same (text arrives per flush either way); resume stays exact, since an event's sequence
    number and text never change once ``pending()`` has handed it to a writer."""

    def __init__(
        self, message_id: str, first: list[dict], on_pending=None, *, durable: bool = True
    ) -> None:
        """``first``: the events the log starts with, already in the database (``durable``) or
        not yet: then ``held`` — flushes leave them (the turn's final write takes them) until
        ``nudge``, the next event, or ``flush_interval_ms`` (flusher.py)."""
        self.message_id = message_id
        self.events: list[dict] = list(first)
        self.flushed = len(self.events) if durable else 0  # events[:flushed] are in the database
        self.held = not durable and bool(self.events)
        self.closed = False
        self._wake = asyncio.Event()
        self._on_pending = on_pending
        self._open: list[str] | None = None  # the last event's text parts, while it can grow

    @property
    def last_seq(self) -> int:
        return len(self.events)

    def add(self, type_: str, data: dict, *, durable: bool = False) -> dict:
        if self._open is not None and not durable and self.events[-1]["type"] == type_:
            self._open.append(data["text"])
            return self.events[-1]
        self._seal()
        self.held = False
        ev = {"seq": len(self.events) + 1, "type": type_, "data": data}
        self.events.append(ev)
        if durable:
            self.mark_flushed(len(self.events))
            return ev
        if type_ in MERGED and data.keys() == {"text"}:
            self._open = [data["text"]]
        if self._on_pending is not None:
            self._on_pending()
        return ev

    def nudge(self) -> None:
        """Release the ``first`` events to the flusher (and tell it)."""
        self.held = False
        if self.flushed < len(self.events) and self._on_pending is not None:
            self._on_pending()

    def add_text(self, type_: str, text: str) -> None:
        """``add(type_, {"text": text})`` for a delta: while the last event can grow, one append
        (a turn adds one per token)."""
        if self._open is not None and self.events[-1]["type"] == type_:
            self._open.append(text)
        else:
            self.add(type_, {"text": text})

    def _seal(self) -> None:
        """The growing event takes its final text; later deltas start a new event."""
        if self._open is not None:
            if len(self._open) > 1:
                self.events[-1]["data"] = {"text": "".join(self._open)}
            self._open = None

    def mark_flushed(self, upto: int) -> None:
        """Events up to seq ``upto`` are in the database: deliver them."""
        if upto >= len(self.events):
            self._seal()  # (pending() did already: what was written is what is delivered)
        if upto > self.flushed:
            self.flushed = upto
            self._notify()

    def pending(self) -> list[dict]:
        """The events not yet durable, final from now on (the caller writes them)."""
        self._seal()
        return self.events[self.flushed :]

    def close(self) -> None:
        self.closed = True
        self._notify()

    def _notify(self) -> None:
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()

    async def batches(self, after: int, idle_s: float | None = None):
        """Yield lists of durable events with seq > after until the log is closed and drained;
        with ``idle_s``, an empty list after that long without events (the SSE keep-alive).
        Events never flushed (the turn lost its row) are not given: the caller reads the rest
        from the database."""
        seq = after
        while True:
            if self.flushed > seq:
                batch = self.events[seq : self.flushed]
                seq = self.flushed
                yield batch
                continue
            if self.closed:
                return
            if idle_s is None:
                await self._wake.wait()
                continue
            try:
                async with asyncio.timeout(idle_s):  # a timer, not a task per wait
                    await self._wake.wait()
            except TimeoutError:
                yield []


def event_rows(message_id: str, events: list[dict], now: int) -> list[dict]:
    return [
        {
            "message_id": message_id,
            "seq": e["seq"],
            "type": e["type"],
            "data": e["data"],
            "created_at": now,
        }
        for e in events
    ]


async def insert_rows(c: AsyncConnection, rows: list[dict]) -> None:
    """Insert event rows; one already stored (same message and seq) is left as it is, so a
    write repeated after an unacknowledged commit (the connection died while committing) is
    harmless instead of failing every later flush on the primary key."""
    if rows:
        await hot.execute(c, _insert_statement(c.dialect.name), rows)


@functools.cache
def _insert_statement(dialect: str):
    """``insert_rows``'s statement, built once per dialect (db/hot.py runs it)."""
    ins = pg_insert if dialect == "postgresql" else sqlite_insert
    return ins(t.stream_events).on_conflict_do_nothing()


async def insert_events(c: AsyncConnection, message_id: str, events: list[dict]) -> None:
    await insert_rows(c, event_rows(message_id, events, now_ms()))


async def read_after(
    c: AsyncConnection, message_id: str, after: int, limit: int = 200
) -> list[dict]:
    q = (
        select(E.seq, E.type, E.data)
        .where(E.message_id == message_id, E.seq > after)
        .order_by(E.seq)
        .limit(limit)
    )
    return [{"seq": r.seq, "type": r.type, "data": r.data} for r in (await c.execute(q)).all()]


async def bounds(c: AsyncConnection, message_id: str) -> tuple[int | None, int | None]:
    row = (
        await c.execute(select(func.min(E.seq), func.max(E.seq)).where(E.message_id == message_id))
    ).one()
    return row[0], row[1]


async def append_durable(c: AsyncConnection, message_id: str, type_: str, data: dict) -> dict:
    """Append one event after the current last one (used when no LiveLog owns the message)."""
    _, last = await bounds(c, message_id)
    ev = {"seq": (last or 0) + 1, "type": type_, "data": data}
    await insert_events(c, message_id, [ev])
    return ev


def _prunable(cutoff: int):
    """Messages whose log may go: finished (a streaming row's log is what its answer is rebuilt
    from if its process dies) and with a newest event older than the cutoff."""
    M = t.messages.c
    last = (
        select(E.created_at)
        .where(E.message_id == M.id)
        .order_by(E.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    return and_(M.status != "streaming", last < cutoff)


async def oldest_rows(
    c: AsyncConnection, cutoff: int, after: tuple | None, limit: int
) -> list[tuple]:
    """Up to ``limit`` keys ``(created_at, message_id, seq)`` of rows older than ``cutoff``, oldest
    first, after the key ``after``: one range of ``ix_stream_events_created``."""
    q = select(E.created_at, E.message_id, E.seq).where(E.created_at < cutoff)
    if after is not None:
        q = q.where(tuple_(E.created_at, E.message_id, E.seq) > tuple_(*after))
    q = q.order_by(E.created_at, E.message_id, E.seq).limit(limit)
    return [tuple(r) for r in (await c.execute(q)).all()]


async def prune_rows(c: AsyncConnection, keys: list[tuple], cutoff: int) -> int:
    """Delete the rows of ``keys`` (from ``oldest_rows``) whose message's whole log is older than
    ``cutoff`` and finished: per message, the seq range the keys span (its rows in between are
    as old). Rows of other messages are left, so a long answer's log goes only as a whole."""
    spans: dict[str, list[int]] = {}
    for _, mid, seq in keys:
        lo_hi = spans.setdefault(mid, [seq, seq])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], seq), max(lo_hi[1], seq)
    if not spans:
        return 0
    M = t.messages.c
    q = select(M.id).where(M.id.in_(sorted(spans)), _prunable(cutoff))
    ok = {r.id for r in (await c.execute(q)).all()}
    if not ok:
        return 0
    stmt = delete(t.stream_events).where(
        E.message_id == bindparam("mid"), E.seq.between(bindparam("lo"), bindparam("hi"))
    )
    await c.execute(stmt, [{"mid": m, "lo": spans[m][0], "hi": spans[m][1]} for m in sorted(ok)])
    return sum(1 for _, mid, _ in keys if mid in ok)  # the rows of ``keys`` that went


async def delete_after(c: AsyncConnection, message_id: str, after_seq: int) -> None:
    """Remove the message's events after ``after_seq`` (a reclaimed turn's sweeper ending)."""
    await c.execute(delete(t.stream_events).where(E.message_id == message_id, E.seq > after_seq))

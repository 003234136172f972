"""Ending a message's generation in the database: the one place a ``streaming`` row stops streaming.

Used by the turn itself (complete, stopped, error) and, for turns whose process is gone, by the
sweeper and by stop. Every ending is one transaction that updates the row only if it is still
``streaming`` (so two enders never both win), appends the closing events after the last durable
one and releases the lease — a follower that sees the row finished also sees the whole log.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import blocks as blk
from ..conversations import dag, tree_store
from ..conversations.wire import message_out
from ..db.rows import Columns
from ..jobs.queue import Job, job_params
from . import end_store, leases
from . import events as ev
from . import store as gstore


async def message_public(c: AsyncConnection, row, info: dict | None = None) -> dict:
    """The message as clients see it; ``info`` = its branch info when known (else read)."""
    if info is None:
        info = (await tree_store.branch_info_for(c, row.conversation_id, [row])).get(row.id)
    out = message_out(row, info, is_admin=False)
    out.pop("metadata", None)
    return out


async def end_message(
    c: AsyncConnection,
    message_id: str,
    *,
    values: dict,
    events: list[dict],
    terminal: str,
    terminal_data: dict,
) -> dict | None:
    """Finish a streaming row. ``events`` already carry seqs; the terminal event gets the next one.

    Returns the terminal event, or None when the row was no longer streaming (someone else ended it).
    """
    ended = await end_message_row(
        c, message_id, values=values, events=events, terminal=terminal, terminal_data=terminal_data
    )
    return None if ended is None else ended[0]


async def end_message_row(
    c: AsyncConnection,
    message_id: str,
    *,
    values: dict,
    events: list[dict],
    terminal: str,
    terminal_data: dict,
    lease: tuple[str, str] | None = None,
) -> tuple[dict, Any] | None:
    """``end_message``, also giving the ended row (the turn's follow-up writes use it instead of
    reading it again). ``lease``: (conversation id, owner token) when the caller is the turn
    holding it: its release is then a key lookup (``leases.release_own``), on PostgreSQL in the
    row's UPDATE itself (``store.end_streaming``)."""
    if "blocks" in values:
        values = {**values, "search_text": blk.visible_text(values["blocks"])}
    released = lease is not None and gstore.releases_with_end(c)
    row = await gstore.end_streaming(c, message_id, values, lease=lease if released else None)
    if row is None:
        return None
    last = events[-1]["seq"] if events else (await ev.bounds(c, message_id))[1] or 0
    data = dict(terminal_data)
    if terminal == "done":
        data["message"] = await message_public(c, row, tree_store.returned_branch_info(row))
    final = {"seq": last + 1, "type": terminal, "data": data}
    await ev.insert_events(c, message_id, [*events, final])
    if lease is None:
        await leases.release_message(c, message_id)
    elif not released:
        await leases.release_own(c, *lease)
    return final, row


async def end_turn_at_once(
    c: AsyncConnection,
    placeholder,
    *,
    values: dict,
    events: list[dict],
    terminal: str,
    terminal_data: dict,
    lease: tuple[str, str],
    jobs: list[Job],
    now: int,
) -> dict | None:
    """``end_message_row`` for a turn on PostgreSQL in one statement (generation/end_store.py):
    the row ``placeholder`` (as the turn inserted it: its question's only child) ended with
    ``values``, ``events`` and the closing event logged, the lease released, ``jobs`` queued.
    The closing event's ``message`` is the placeholder with ``values`` laid over it, the only
    child of its parent; the statement ends nothing unless that is still so (end_store says
    what it checks). Returns the closing event, or None when nothing was written: the caller
    then takes the transaction path, which finds out why (ended elsewhere, reclaim, a sibling
    or a rating since)."""
    if "blocks" in values:
        values = {**values, "search_text": blk.visible_text(values["blocks"])}
    row = Columns({**placeholder._mapping, **values})  # as the ending statement returns it
    mid, parent = placeholder.id, placeholder.parent_id
    data = dict(terminal_data)
    if terminal == "done":
        info = dag.branch_info([mid], {mid: parent}, {parent: [mid]})[mid]
        data["message"] = await message_public(c, row, info)
    final = {"seq": events[-1]["seq"] + 1, "type": terminal, "data": data}
    params = {f"v_{k}": v for k, v in values.items()}
    params.update(leases.own_params(*lease))
    params.update(job_params(jobs, now))
    params.update(b_mid=mid, b_cid=placeholder.conversation_id, b_parent=parent)
    params.update(b_feedback=placeholder.feedback, b_events=[*events, final], b_now=now)
    ended = await end_store.end_turn(c, params, tuple(sorted(values)), len(jobs))
    return final if ended else None


async def ended_with(c: AsyncConnection, message_id: str, seq: int, terminal: str) -> dict | None:
    """The closing event at ``seq`` if it is a ``terminal`` one: the trace of a final write that
    committed although its caller saw the connection fail (and so tries again)."""
    rows = await ev.read_after(c, message_id, seq - 1, 1)
    if rows and rows[0]["seq"] == seq and rows[0]["type"] == terminal:
        return rows[0]
    return None


async def reclaim(c: AsyncConnection, message_id: str, *, after_seq: int) -> bool:
    """Reopen a row a sweeper ended as ``generation_interrupted`` while its turn was alive but
    could not reach the database (its heartbeat failed past the lease): the turn still holds
    the finished answer, which beats the partial text of the last flush. The sweeper's closing
    event (and anything after ``after_seq``, the turn's last durable event) is removed, so the
    turn's own events and its closing event follow on. False when the row ended otherwise (a
    stop, another writer) — then it is left alone."""
    if not await gstore.reopen_interrupted(c, message_id):
        return False
    await ev.delete_after(c, message_id, after_seq)
    return True


async def _blocks_from_log(c: AsyncConnection, message_id: str) -> dict:
    """The dead turn's answer from its durable events (the row's partial blocks may be up to a
    flush interval older); {} when the log holds no content (pruned, or nothing streamed)."""
    # Lock the row before reading the log: under READ COMMITTED a flush committing meanwhile
    # (its turn is alive after all) would otherwise add events this read never saw, and the
    # ended row would lack text a client had been shown.
    await gstore.lock_message(c, message_id)
    events, after = [], 0
    while True:
        page = await ev.read_after(c, message_id, after, 1000)
        events += page
        if len(page) < 1000:
            break
        after = page[-1]["seq"]
    rebuilt = blk.from_events(events)
    return {"blocks": rebuilt} if rebuilt is not None else {}


async def end_orphan(c: AsyncConnection, message_id: str, *, stopped: bool) -> dict | None:
    """End a streaming row whose turn is not running anywhere, keeping the flushed partial text.

    ``stopped`` (the user asked to stop it) ends it as complete/stopped; otherwise it becomes
    error/generation_interrupted. The closing event is marked ``recovered``: its seq may equal one
    a client saw from the dead process, so follow() answers such a client with a snapshot.
    """
    if stopped:
        return await end_message(
            c,
            message_id,
            values={
                "status": "complete",
                "stop_reason": "stopped",
                **await _blocks_from_log(c, message_id),
            },
            events=[],
            terminal="done",
            terminal_data={"stop_reason": "stopped", "recovered": True},
        )
    values = {"status": "error", "stop_reason": "error", "error": "generation_interrupted"}
    return await end_message(
        c,
        message_id,
        values={**values, **await _blocks_from_log(c, message_id)},
        events=[],
        terminal="error",
        terminal_data={
            "code": "generation_interrupted",
            "recovered": True,
            "message": "the process generating this answer stopped before it "
            "finished; the text up to its last save is kept",
        },
    )

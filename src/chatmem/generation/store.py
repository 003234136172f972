"""SQL of the generation domain on the tables it shares: messages, conversations, users.

Why it exists: every statement a turn makes lives in a store (docs/architecture.md, "Where SQL
lives"). The tables generation owns have their own modules — ``leases.py`` (generation leases),
``events.py`` (the event log) — and the tree's writes (inserting messages, the active leaf) are
``conversations/store.py``'s. What is left is here: reading and ending a streaming row, the
sweeper's scan for orphaned turns, the turn's conversation and per-user lock (the turn cap) and the title job's reads.
Each function is one statement on the caller's connection; the caller owns the transaction.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Literal

from sqlalchemy import (
    BigInteger,
    ColumnClause,
    String,
    and_,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import blocks as blk
from ..conversations import forks, tree_store
from ..db import hot
from ..db import schema as t
from ..errors import found
from ..workspaces.store import visible
from . import leases

M = t.messages.c
C = t.conversations.c
L = t.conversation_generation_leases.c

#: A literal, not a bound parameter: SQLite uses a partial index only for a query whose WHERE
#: names the index's own condition.
STREAMING: ColumnClause[str] = literal_column("'streaming'")


# ── messages: reads ──────────────────────────────────────────────────────────────────────────────


async def message_in(c: AsyncConnection, conv_id: str, mid: str):
    """The message row if it belongs to the conversation, else None."""
    q = select(t.messages).where(M.id == mid, M.conversation_id == conv_id)
    return (await c.execute(q)).first()


def _with_jumps_statement():
    j1, j2 = t.messages.alias("j1"), t.messages.alias("j2")
    return (
        select(
            t.messages,
            j1.c.jump_id.label("j1_jump_id"),
            j1.c.jump_depth.label("j1_jump_depth"),
            j2.c.jump_id.label("j2_jump_id"),
            j2.c.jump_depth.label("j2_jump_depth"),
        )
        .outerjoin(j1, j1.c.id == M.jump_id)
        .outerjoin(j2, j2.c.id == j1.c.jump_id)
        .where(M.id == bindparam("b_mid"), M.conversation_id == bindparam("b_cid"))
    )


#: Built once (module load): two aliases of ``messages`` cost ~1.7 ms of CPU to build per call.
_WITH_JUMPS = _with_jumps_statement()


async def message_in_with_jumps(c: AsyncConnection, conv_id: str, mid: str):
    """``message_in`` plus the pointers two jumps up (``j1_jump_id``/``j1_jump_depth``: the
    pointer of the row's jump; ``j2_…``: of that one's jump; NULL when absent): what
    ``dag.chain_places`` needs to place two new levels below the row without reading again."""
    return (await c.execute(_WITH_JUMPS, {"b_mid": mid, "b_cid": conv_id})).first()


async def message_row(c: AsyncConnection, mid: str):
    """The message row (it must exist)."""
    return (await c.execute(select(t.messages).where(M.id == mid))).one()


async def parent_of(c: AsyncConnection, mid: str):
    """(parent_id) of a message, or None."""
    return (await c.execute(select(M.parent_id).where(M.id == mid))).first()


async def blocks_of(c: AsyncConnection, mid: str):
    """(blocks) of a message, or None."""
    return (await c.execute(select(M.blocks).where(M.id == mid))).first()


async def status_of(c: AsyncConnection, mid: str) -> str | None:
    """The message's status; None when it does not exist (deleted)."""
    return (await c.execute(select(M.status).where(M.id == mid))).scalar()


async def streaming_ids(
    c: AsyncConnection, conv_id: str, user_id: str, *, shared: bool = False
) -> list[str]:
    """The user's streaming messages in the conversation (``shared``: the ones they authored)."""
    mine = M.author_id if shared else M.user_id
    q = select(M.id).where(M.conversation_id == conv_id, mine == user_id, M.status == "streaming")
    return [r.id for r in (await c.execute(q)).all()]


async def still_streaming(c: AsyncConnection, ids: list[str]) -> list:
    """Those of ``ids`` whose row is still streaming."""
    q = select(M.id).where(M.id.in_(ids), M.status == "streaming")
    return list((await c.execute(q)).all())


async def lock_message(c: AsyncConnection, mid: str) -> None:
    """Row-lock the message (PostgreSQL; SQLite's write transaction already excludes writers)."""
    await c.execute(select(M.id).where(M.id == mid).with_for_update())


# ── messages: writes of a streaming row ──────────────────────────────────────────────────────────


@functools.cache
def _end_statement(dialect: str, release: bool = False):
    """``end_streaming``'s UPDATE, built once per dialect: the SET columns come from the
    parameters of each call (an alias and a subquery cost ~1.4 ms of CPU to build per call).
    ``release`` (PostgreSQL): with the lease's DELETE in its ``WITH`` (``leases.own_deletion``)."""
    q = (
        update(t.messages)
        .where(M.id == bindparam("b_mid"), M.status == "streaming")
        .returning(*t.messages.c, tree_store.siblings_json(dialect))
    )
    return q.add_cte(leases.own_deletion().cte("released")) if release else q


async def end_streaming(
    c: AsyncConnection, mid: str, values: dict, *, lease: tuple[str, str] | None = None
):
    """Update the row only while it is streaming and return it as updated (RETURNING: no second
    read), with ``siblings_json`` (``tree_store.siblings_json``: the ``done`` event's branch info without
    a read); None when someone else ended it.

    ``lease`` (conversation id, owner token; PostgreSQL only — ``releases_with_end``): the same
    statement releases the turn's lease, one round trip for two. It does so whether or not the
    row was still streaming: a turn that finds its row ended by someone else is over too."""
    params = {**values, "b_mid": mid}
    if lease is not None:
        params.update(leases.own_params(*lease))
    q = _end_statement(c.dialect.name, lease is not None)
    return (await hot.execute(c, q, params)).first()


def releases_with_end(c: AsyncConnection) -> bool:
    """Whether ``end_streaming`` can release the lease in its own statement (a data-modifying
    ``WITH``: PostgreSQL's, not SQLite's)."""
    return c.dialect.name == "postgresql"


async def reopen_interrupted(c: AsyncConnection, mid: str) -> bool:
    """Set a row the sweeper ended as ``generation_interrupted`` streaming again; False otherwise."""
    res = await c.execute(
        update(t.messages)
        .where(
            M.id == mid,
            M.status == "error",
            M.error == "generation_interrupted",
        )
        .values(status="streaming", error="", stop_reason=None)
    )
    return bool(res.rowcount)


async def hold_streaming(c: AsyncConnection, ids: list[str]) -> set[str]:
    """Which of ``ids`` are still streaming (the others were swept or ended elsewhere): one
    no-op write of all their rows, which on PostgreSQL also holds them — a sweeper ending one
    waits for the flush's commit, so the events the flush writes precede its end. One
    statement per flush, whatever the number of running turns (a statement per turn before)."""
    if not ids:
        return set()
    return set((await hot.execute(c, _TOUCH_STREAMING, {"b_ids": ids})).scalars())


async def write_partial(c: AsyncConnection, mid: str, blocks: list[dict]) -> bool:
    """Write a live turn's partial blocks (and their ``search_text``); False when the row is no
    longer streaming (swept or ended elsewhere)."""
    params = {"b_mid": mid, "blocks": blocks, "search_text": blk.visible_text(blocks)}
    return (await hot.execute(c, _WRITE_PARTIAL, params)).first() is not None


#: ``hold_streaming``'s and ``write_partial``'s statements, built once
_TOUCH_STREAMING = (
    update(t.messages)
    .where(M.id.in_(bindparam("b_ids", expanding=True)), M.status == STREAMING)
    .values(status=M.status)
    .returning(M.id)
)
_WRITE_PARTIAL = (
    update(t.messages).where(M.id == bindparam("b_mid"), M.status == STREAMING).returning(M.id)
)


# ── the turn cap, the sweeper ────────────────────────────────────────────────────────────────────


#: Which message ``conversation_for_turn`` joins as the new question's parent: the
#: conversation's active leaf, the given ``parent_id``, or none.
ParentOf = Literal["leaf", "given"] | None

#: The parent's columns the turn reads (``p_<column>``; ``p_j1_…``/``p_j2_…``: the pointers of
#: its jump's row and of that one's jump, as ``message_in_with_jumps`` gives them)
_PARENT_COLUMNS = ("id", "role", "status", "author_id", "depth", "jump_id", "jump_depth")


async def conversation_for_turn(
    c: AsyncConnection,
    user_id: str,
    cid: str,
    *,
    parent: ParentOf = None,
    parent_id: str | None = None,
):
    """The conversation a turn starts in (``conversations.store.get_conversation``: NotFound
    unless the user may see it), locked for the turn's transaction on PostgreSQL — and, in the
    same statement, the user's row, which serialises one user's turn starts so the concurrency
    cap (counted by the lease's INSERT, a later statement with a later snapshot) holds under
    races. One statement for what were two (``SELECT … FOR UPDATE`` of the conversation, then
    of the user). SQLite's ``BEGIN IMMEDIATE`` already serialises every writer.

    The user's row is locked FOR NO KEY UPDATE: inserts referencing the user (memories, jobs'
    rows) take KEY SHARE locks, which this does not conflict with — a plain FOR UPDATE
    deadlocked against the memory job. The conversation's stays FOR UPDATE, as for every other
    write to it; the rows are locked in that order (conversation, then user), as before:
    PostgreSQL's LockRows node takes a result row's locks in the order of the locking clauses
    (the plan's row marks follow the query's), whichever way the join is planned.
    The row has one column more, ``may_have_memories``: false when the conversation is the
    user's own and the user had no memory row at all then (``turns.TurnSpec.no_memories``; a
    workspace conversation's memories are the workspace's: always true).

    ``parent`` (a new question's): the row also holds that message — the active leaf, or
    ``parent_id`` — as ``message_in_with_jumps`` would read it, outer-joined (``joined_parent``):
    one statement for what were two. (On PostgreSQL, a conversation whose active leaf a
    concurrent turn moved while this one waited for the lock comes back with the new leaf and
    no joined row — the statement's snapshot predates the new row —, so ``joined_parent`` is
    None and the caller reads it.)"""
    q = _turn_conversation_statement(c.dialect.name == "postgresql", parent)
    params: dict[str, str | None] = {"b_cid": cid, "b_uid": user_id}
    if parent == "given":
        params["b_parent"] = parent_id
    row = found((await hot.execute(c, q, params)).first(), "conversation not found")
    if row.fork_source_id is not None:  # a fork still being copied: copied first, in this turn
        await forks.settle_in(c, cid)
        row = found((await hot.execute(c, q, params)).first(), "conversation not found")
    return row


async def conversation_seen(c: AsyncConnection, user_id: str, cid: str):
    """``conversation_for_turn``'s row for a question under the active leaf (its parent
    joined), read without a lock: PostgreSQL's start outside a transaction
    (``start_store.open_turn`` given a ``lock`` takes the locks and re-checks what the turn's rows were
    computed from). A pending fork comes back as it is (the caller takes the locked way, which
    settles it)."""
    q = _turn_conversation_statement(False, "leaf")
    params = {"b_cid": cid, "b_uid": user_id}
    return found((await hot.execute(c, q, params)).first(), "conversation not found")


def joined_parent(conv, parent_id: str):
    """The parent ``conversation_for_turn`` joined, if it is ``parent_id`` (attributes as
    ``message_in_with_jumps``' row); None when it joined none (read it then)."""
    if getattr(conv, "p_id", None) != parent_id:
        return None
    m = conv._mapping
    return SimpleNamespace(**{k[2:]: m[k] for k in m if k.startswith("p_")})


@functools.cache
def _turn_conversation_statement(locking: bool, parent: ParentOf = None):
    """``conversation_for_turn``'s SELECT, built once per (locking, parent): ``get_conversation``'s,
    plus ``may_have_memories`` (one probe of ``idx_memories_user_status``) and the parent's row
    (``_PARENT_COLUMNS``, outer-joined); with ``locking`` (PostgreSQL's locked read; its unlocked
    one, ``conversation_seen``, is the other form) the user's row joined and both locks — the two
    locking clauses of different strengths are a suffix: SQLAlchemy renders one
    ``FOR … OF`` clause only (neither names an outer join's nullable side)."""
    uid = bindparam("b_uid", type_=String)
    mem = t.memories.c
    mine = exists(select(mem.id).where(mem.user_id == uid))
    may = or_(C.workspace_id != "", mine).label("may_have_memories")
    source = t.conversations.join(t.users, t.users.c.id == uid) if locking else t.conversations
    cols: list = [t.conversations, may]
    if parent is not None:
        p, j1, j2 = t.messages.alias("p"), t.messages.alias("j1"), t.messages.alias("j2")
        pid = C.active_leaf_id if parent == "leaf" else bindparam("b_parent", type_=String)
        source = (
            source.outerjoin(p, and_(p.c.id == pid, p.c.conversation_id == C.id))
            .outerjoin(j1, j1.c.id == p.c.jump_id)
            .outerjoin(j2, j2.c.id == j1.c.jump_id)
        )
        cols += [p.c[k].label(f"p_{k}") for k in _PARENT_COLUMNS]
        cols += [j.c[k].label(f"p_{n}_{k}") for n, j in (("j1", j1), ("j2", j2)) for k in _JUMP]
    q = select(*cols).select_from(source).where(C.id == bindparam("b_cid"), visible(C, uid))
    return q.suffix_with("FOR UPDATE OF conversations FOR NO KEY UPDATE OF users") if locking else q


_JUMP = ("jump_id", "jump_depth")


async def orphans(c: AsyncConnection, now: int) -> list:
    """Up to 200 streaming rows without a lease live at ``now``, oldest first
    (``idx_messages_streaming``): one statement, built once (a sweep in every process every few
    seconds built and compiled it anew)."""
    return list((await hot.execute(c, _ORPHANS, {"b_now": now})).all())


def _orphans_statement():
    # a lease of the row's turn that has not expired: a primary-key range of its conversation
    live = exists(
        select(L.owner_token).where(
            L.conversation_id == M.conversation_id,
            func.substr(L.owner_token, 1, func.length(M.id) + 1) == M.id + ":",
            L.expires_at > bindparam("b_now", type_=BigInteger),
        )
    )
    return select(M.id).where(and_(M.status == STREAMING, ~live)).order_by(M.created_at).limit(200)


_ORPHANS = _orphans_statement()


async def lease_token_of(c: AsyncConnection, mid: str) -> str | None:
    """The owner token of the message's lease, live or not (a stop request marks it)."""
    q = select(L.owner_token).where(L.owner_token.startswith(mid + ":", autoescape=True))
    return (await c.execute(q)).scalar()


# ── titles ───────────────────────────────────────────────────────────────────────────────────────


async def title_of(c: AsyncConnection, cid: str):
    """(title) of the conversation, or None once it is deleted."""
    return (await c.execute(select(C.title).where(C.id == cid))).first()


async def first_user_blocks(c: AsyncConnection, cid: str):
    """(blocks) of the conversation's first user message, or None."""
    q = (
        select(M.blocks)
        .where(M.conversation_id == cid, M.role == "user")
        .order_by(M.created_at, M.id)
        .limit(1)
    )
    return (await c.execute(q)).first()


async def set_title_if_default(
    c: AsyncConnection, cid: str, title: str, defaults: tuple[str, ...], now: int
) -> None:
    """Compare-and-set: name the conversation unless the user already did."""
    await c.execute(
        update(t.conversations)
        .where(C.id == cid, C.title.in_(defaults))
        .values(title=title, updated_at=now)
    )

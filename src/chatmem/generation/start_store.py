"""SQL for a turn's start in one statement after its lock (PostgreSQL): the generation lease
taken, the question and its answer's placeholder inserted, the conversation counted and moved
to the answer — what were three statements of ``start_turn``'s transaction.

Why it exists (issue 18): on PostgreSQL every round trip costs ~0.3–0.5 ms of server CPU. The
transaction keeps its first statement (``store.conversation_for_turn``: the conversation and
the user's row locked, so one user's turn starts are serialised and the turn cap holds: the
lease's count must run in a later statement, whose snapshot sees the turn that held the lock
before) and then runs this one: the lease's INSERT (``leases.acquiring``: under the cap, or
taking over an expired lease) is a data-modifying CTE, and the messages' INSERT and the
conversation's UPDATE read its RETURNING — so nothing is written unless the lease was taken.
Then (a live holder, or the cap) the caller goes the statement-per-step way, which says which
(409, 429, an edit's own branch). SQLite has no data-modifying CTE: its start keeps its
statements (its ``BEGIN IMMEDIATE`` costs no round trip).

A question under the active leaf (the common send) needs no transaction at all (``open_turn``
given a ``lock``): the statement takes the two locks itself in a first, materialised CTE,
re-checks there what the unlocked read the rows came from saw, and counts the cap with
``chatmem_live_leases`` (migration 0024), whose snapshot is taken after the lock was granted —
a read and this statement, two round trips where the transaction takes four.
"""

from __future__ import annotations

import functools

from sqlalchemy import Integer, bindparam, exists, select, union_all, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import store
from ..db import hot
from ..db import schema as t
from ..db.rows import Columns
from . import leases

C = t.conversations.c
M = t.messages.c


@functools.cache
def open_statement(keys: tuple[str, ...], rows: int, capped: bool, locked: bool = False):
    """Built once per (message columns, number of rows, capped, locked): parameters are
    ``leases.acquire_params``, ``r<i>_<column>`` per message row, and ``b_cid``, ``b_added``,
    ``b_created``, ``b_now``, ``b_leaf`` (``store.touch_conversation``'s). One row — the
    conversation as updated (``c_<column>``) with the last message row as inserted
    (``m_<column>``) — when the lease was taken, none otherwise.

    ``locked`` (``open_turn`` given a ``lock``): the statement takes the locks itself —
    ``b_uid``'s row and the conversation's, whose columns the rows came from must still be as
    read (``seen``'s ``b_seen_…``) — and the lease comes from that row
    (``leases.acquiring_after``)."""
    if locked:
        lease = leases.acquiring_after(_locking(), capped).cte("lease")
    else:
        lease = leases.acquiring(capped).cte("lease")
    taken = exists(select(lease.c.owner_token))
    selects = [
        select(*(bindparam(f"r{i}_{k}", type_=t.messages.c[k].type) for k in keys)).where(taken)
        for i in range(rows)
    ]
    source = selects[0] if rows == 1 else union_all(*selects)
    ins = pg_insert(t.messages).from_select(list(keys), source).returning(*t.messages.c)
    inserted = ins.cte("inserted")
    created = bindparam("b_created", type_=C.last_message_at.type)
    counted = store.counted(created, bindparam("b_added", type_=Integer))
    counted["active_leaf_id"] = bindparam("b_leaf", type_=C.active_leaf_id.type)
    touch = (
        update(t.conversations)
        .where(C.id == bindparam("b_cid"), taken)
        .values(counted)
        .returning(*t.conversations.c)
        .cte("touched")
    )
    cols = [c.label(f"c_{c.key}") for c in touch.c] + [c.label(f"m_{c.key}") for c in inserted.c]
    last = bindparam(f"r{rows - 1}_id", type_=M.id.type)
    return select(*cols).select_from(touch.join(inserted, inserted.c.id == last))


def _locking():
    """The conversation and the user's row locked (as ``store.conversation_for_turn`` locks
    them, in that order), while the conversation is not a pending fork and its ``_SEEN``
    columns are still the ones the turn's rows were computed from: a concurrent change to them
    is seen, as a locked row is re-checked against the WHERE once its lock is granted.
    MATERIALIZED: run once, before anything reads its row."""
    users = t.users
    uid = bindparam("b_uid", type_=users.c.id.type)
    same = [C[k].is_not_distinct_from(bindparam(f"b_seen_{k}", type_=C[k].type)) for k in _SEEN]
    q = (
        select(users.c.id)
        .select_from(t.conversations.join(users, users.c.id == uid))
        .where(C.id == bindparam("b_cid"), C.fork_source_id.is_(None), *same)
        .suffix_with("FOR UPDATE OF conversations FOR NO KEY UPDATE OF users")
    )
    return q.cte("locked").prefix_with("MATERIALIZED")


#: what a turn's rows are computed from: the parent (the active leaf), and the rows' owner,
#: author and agent (``store.message_rows``)
_SEEN = ("active_leaf_id", "user_id", "workspace_id", "agent_id")


def seen(user_id: str, conv) -> dict:
    """``open_turn``'s ``lock``: the user, and the conversation's ``_SEEN`` columns as read."""
    return {"b_uid": user_id, **{f"b_seen_{k}": getattr(conv, k) for k in _SEEN}}


def opens_at_once(c: AsyncConnection) -> bool:
    """Whether ``open_turn`` can run here (a data-modifying ``WITH``: PostgreSQL's)."""
    return c.dialect.name == "postgresql"


async def open_turn(
    c: AsyncConnection, lease: dict, rows: list[dict], touch: dict, lock: dict | None = None
) -> tuple[Columns, Columns] | None:
    """Run ``open_statement``: ``lease`` (``leases.acquire_params``), ``rows`` (message rows
    naming the same columns: ``store.message_rows``), ``touch`` (``b_…``). Returns (the
    conversation as updated, the last row as inserted), or None when the lease was not taken
    (nothing written).

    ``lock`` (``seen``: the user and the conversation's columns as read): the statement takes
    its locks itself, for a start outside a transaction whose rows came from an unlocked read;
    then None also when those columns changed, or the conversation went or became a pending
    fork, since the read."""
    keys = tuple(sorted(rows[0]))
    params = {**lease, **touch, **(lock or {})}
    for i, r in enumerate(rows):
        params.update({f"r{i}_{k}": r[k] for k in keys})
    q = open_statement(keys, len(rows), "cap" in lease, lock is not None)
    row = (await hot.execute(c, q, params)).first()
    if row is None:
        return None
    values = tuple(row)  # by position: a name lookup per column was ~1 % of a turn's CPU
    n = len(_CONV_KEYS)
    conv = dict(zip(_CONV_KEYS, values[:n], strict=True))
    return Columns(conv), Columns(dict(zip(_MSG_KEYS, values[n:], strict=True)))


#: ``open_statement``'s row in order: the conversation's columns, then the message's
_CONV_KEYS = tuple(c.key for c in t.conversations.c)
_MSG_KEYS = tuple(c.key for c in t.messages.c)

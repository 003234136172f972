"""SQL for a turn's final write in one statement (PostgreSQL): the row ended, its closing events
logged, its lease released and its follow-up jobs queued — what was a transaction of three
statements plus BEGIN and COMMIT (five round trips), now one round trip as its own transaction.

Why it exists (issue 18): on PostgreSQL a round trip costs ~0.3–0.5 ms of server CPU (SQLAlchemy,
asyncpg, the loop), and the ending ran five of them per turn. The ``messages`` UPDATE is a
data-modifying CTE (``ended``); the other writes read its RETURNING, so each happens only for
the row this statement ended — never for a row someone else (the sweeper, a stop) ended:

- ``logged``: the events, one JSON array parameter (``jsonb_array_elements``: one statement
  shape for any number of events; each row's ``data`` is the element as the column would have
  stored it), ``ON CONFLICT DO NOTHING`` as ``events.insert_rows``;
- ``released``: ``leases.own_deletion`` — only once the row is ended: a turn whose statement
  ended nothing goes on to the transaction path (finalize.end_message_row) while still holding
  its lease, so no sweep can take the row for an orphan in between;
- ``queued``: the jobs (``jobs.queue.insert_after``), rows of ``ended``.

The closing event's ``message`` is built by the caller before the statement runs, from the row
as the turn inserted it plus what the ending sets (finalize.end_turn_at_once). The UPDATE's
``WHERE`` holds what that relies on, and ends nothing otherwise: the row is still streaming, in
the same conversation under the same parent, with the same rating (``feedback``: the one column
of a streaming row's public form another request may change), and is its parent's only child
(no sibling was added meanwhile). SQLite has no data-modifying CTE: its ending stays a
transaction.
"""

from __future__ import annotations

import functools

from sqlalchemy import BigInteger, and_, bindparam, column, exists, func, select, true, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t
from ..jobs.queue import insert_after
from . import leases

M = t.messages.c
E = t.stream_events.c


def _ended(columns: tuple[str, ...]):
    """The UPDATE of a streaming row that ends it (``v_<column>`` parameters) only while the
    closing event built beforehand is still true of it; returns its id."""
    sib = t.messages.alias("sib")
    alone = ~exists(select(sib.c.id).where(sib.c.parent_id == M.parent_id, sib.c.id != M.id))
    same = and_(
        M.id == bindparam("b_mid"),
        M.status == "streaming",
        M.conversation_id == bindparam("b_cid"),
        M.parent_id == bindparam("b_parent"),
        M.feedback == bindparam("b_feedback"),
        alone,
    )
    sets = {k: bindparam(f"v_{k}", type_=t.messages.c[k].type) for k in columns}
    return update(t.messages).where(same).values(sets).returning(M.id).cte("ended")


def _logged(ended):
    """The events (``b_events``: a JSON array of ``{"seq", "type", "data"}``) for the ended row."""
    e = func.jsonb_array_elements(bindparam("b_events", type_=JSONB))
    ev = e.table_valued(column("value", JSONB)).alias("e")
    rows = select(
        ended.c.id,
        ev.c.value["seq"].astext.cast(BigInteger),
        ev.c.value["type"].astext,
        ev.c.value["data"],
        bindparam("b_now", type_=E.created_at.type),
    ).select_from(ended.join(ev, true()))
    cols = ["message_id", "seq", "type", "data", "created_at"]
    return pg_insert(t.stream_events).from_select(cols, rows).on_conflict_do_nothing()


@functools.cache
def end_statement(columns: tuple[str, ...], jobs: int):
    """The whole final write, built once per (SET columns, number of jobs): parameters are
    ``b_mid``, ``b_cid``, ``b_parent``, ``b_feedback``, ``v_<column>``, ``b_events``, ``b_now``,
    ``leases.own_params`` and ``jobs.queue.job_params``. One row (the id) when it ended the row,
    none when it wrote nothing."""
    ended = _ended(columns)
    released = leases.own_deletion().where(exists(select(ended.c.id)))
    ctes = [released.cte("released"), _logged(ended).cte("logged")]
    if jobs:
        ctes.append(insert_after(ended, jobs).cte("queued"))
    return select(ended.c.id).add_cte(*ctes)


async def end_turn(c: AsyncConnection, params: dict, columns: tuple[str, ...], jobs: int) -> bool:
    """Run ``end_statement`` (``params`` as it says); whether it ended the row."""
    return (await hot.execute(c, end_statement(columns, jobs), params)).first() is not None

"""SQL for a log-mode append: the message, its place, the conversation's counters and the
follow-up jobs in as few statements as each database allows.

Why it exists (issue 18): an append (``POST …/messages`` with ``generate: false``: what an
application that calls its model itself sends for every message) was five statements in a
transaction — the conversation under lock, the parent's place, the INSERT, the counter UPDATE,
the job INSERT — most of its cost on PostgreSQL being round trips. Here:

- the conversation's visibility test, its active leaf (or the given parent), the parent's
  ``depth`` and jump pointer (``dag.jump_for``, spelt in SQL by ``child_place``) and the row's
  owner (``store._authored``) are read inside the message's own ``INSERT … SELECT``;
- on PostgreSQL that INSERT, the counter UPDATE and the jobs' INSERT are one statement (the
  latter two data-modifying CTEs of the first: nothing happens when it inserts nothing), which
  can run as its own transaction. It runs inside the function ``chatmem_append_logged``
  (migration 0022, which says why: its plan is made once per connection, where the engine's
  ``force_custom_plan`` re-planned the statement on every append); the function's body mirrors
  ``_insert_select``, ``child_place``, ``store.counted`` and the jobs' skip of a queued dedupe
  key — a change to one of them needs a migration that replaces it. SQLite (no DML in a CTE,
  no planning cost worth saving) runs ``_insert_select`` and two more statements.

The INSERT inserts nothing — and the caller falls back to the statement-per-step path of
``store.insert_message``, which says why — when the conversation is not the user's (404), the
parent is not in it (422), or the active leaf points at a deleted message (the repair). On
PostgreSQL it also inserts nothing when it had to wait for another transaction's lock on the
conversation and that one moved the active leaf: the statement's snapshot predates the new
leaf, so the join finds no parent, and the fallback (a new statement, a new snapshot) appends
under the new leaf — never under the stale one (tests/test_log_mode_fast.py). The lock is
``FOR UPDATE OF`` the conversation row, what ``store.get_conversation(for_update=True)`` took.
"""

from __future__ import annotations

import functools
from typing import Literal

from sqlalchemy import String, and_, bindparam, case, false, func, insert, select, true
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t
from ..jobs.queue import Job, enqueue_many, job_rows
from ..workspaces.store import visible
from . import blocks as blk
from . import store, tree_store

C = t.conversations.c
M = t.messages.c

#: Where the new message goes: under the active leaf, under a given message, or as a new root.
Under = Literal["leaf", "given", "root"]


def child_place(p, jr) -> tuple:
    """(depth, jump_id, jump_depth) of a new child of the row ``p``, whose jump's row is ``jr``
    (both outer-joined: ``p`` NULL makes a root, depth 0 and no pointer): ``dag.jump_for`` in
    SQL. A jump a round deletion removed joins no ``jr``; the child then points at its parent,
    as ``store._child_place`` does."""
    j = func.coalesce(p.c.jump_id, p.c.id)
    jd = case((p.c.jump_id.is_(None), p.c.depth), else_=p.c.jump_depth)
    jj = func.coalesce(jr.c.jump_id, j)
    jjd = case((jr.c.jump_id.is_(None), jd), else_=jr.c.jump_depth)
    over = (p.c.depth - jd) == (jd - jjd)  # equal spans: jump over both (NULL: no)
    return (
        func.coalesce(p.c.depth + 1, 0),
        case((over, jj), else_=p.c.id),
        case((over, jjd), else_=p.c.depth),
    )


def _bind(name: str, col: str):
    return bindparam(name, type_=t.messages.c[col].type)


def _insert_select(under: Under):
    """The message's ``INSERT … SELECT`` from the visible conversation and the parent's row
    (SQLite's; PostgreSQL's is in ``chatmem_append_logged``, which locks the conversation: a
    SQLite write transaction holds the database's write lock already)."""
    conv = t.conversations.alias("conv")
    p, jr = t.messages.alias("p"), t.messages.alias("jr")
    uid = bindparam("b_uid", type_=String)
    parent = {"leaf": conv.c.active_leaf_id, "given": _bind("b_parent", "parent_id")}.get(under)
    shared = conv.c.workspace_id != ""  # a workspace row is its creator's; who spoke: author_id
    depth, jump_id, jump_depth = child_place(p, jr)
    cols = {
        "id": _bind("b_id", "id"),
        "conversation_id": conv.c.id,
        "parent_id": p.c.id,
        "role": _bind("b_role", "role"),
        "blocks": _bind("b_blocks", "blocks"),
        "search_text": _bind("b_text", "search_text"),
        "created_at": _bind("b_created", "created_at"),
        "user_id": case((shared, conv.c.user_id), else_=uid),
        "author_id": case((shared, uid), else_=""),
        "agent_id": conv.c.agent_id,
        "metadata": _bind("b_metadata", "metadata"),
        "model_id": _bind("b_model", "model_id"),
        "depth": depth,
        "jump_id": jump_id,
        "jump_depth": jump_depth,
    }
    on = false() if parent is None else and_(p.c.id == parent, p.c.conversation_id == conv.c.id)
    found = {
        "leaf": conv.c.active_leaf_id.is_(None) | p.c.id.is_not(None),
        "given": p.c.id.is_not(None),
    }
    sel = (
        select(*cols.values())
        .select_from(conv.outerjoin(p, on).outerjoin(jr, jr.c.id == p.c.jump_id))
        .where(conv.c.id == bindparam("b_cid", type_=String), visible(conv.c, uid))
        .where(found.get(under, true()))
    )
    return insert(t.messages).from_select(list(cols), sel)


@functools.cache
def _sqlite_statement(under: Under):
    return _insert_select(under).returning(*t.messages.c, tree_store.siblings_json("sqlite"))


#: ``chatmem_append_logged``'s parameters, in its order (migration 0022)
_FUNCTION_ARGS = (
    ("b_cid", C.id.type),
    ("b_uid", C.user_id.type),
    ("b_under", String()),
    ("b_parent", M.parent_id.type),
    ("b_id", M.id.type),
    ("b_role", M.role.type),
    ("b_blocks", M.blocks.type),
    ("b_text", M.search_text.type),
    ("b_created", M.created_at.type),
    ("b_metadata", M.metadata.type),
    ("b_model", M.model_id.type),
    ("b_now", C.updated_at.type),
    ("b_jobs", t.jobs.c.payload.type),
)


@functools.cache
def _pg_statement():
    """One statement: ``chatmem_append_logged`` (migration 0022: the INSERT, the conversation's
    UPDATE and the job rows, planned once per connection) and the row's siblings."""
    args = (bindparam(name, type_=type_) for name, type_ in _FUNCTION_ARGS)
    fn = func.chatmem_append_logged(*args).table_valued(*t.messages.c).alias("f")
    sibs = tree_store.siblings_json("postgresql", parent=fn.c.parent_id)
    return select(*fn.c, sibs)


async def append_logged(
    c: AsyncConnection,
    conv_id: str,
    user_id: str,
    under: Under,
    parent_id: str | None,
    *,
    values: dict,
    jobs: list[Job],
    now: int,
):
    """Insert the message (``values``: ``id``, ``role``, ``blocks``, ``created_at``,
    ``metadata``, ``model_id``) under ``under``, count it, make it the active leaf and queue
    ``jobs`` (each skipped while its dedupe key is queued): the stored row with
    ``siblings_json`` (``tree_store.returned_branch_info``), or None when nothing was written
    (the module's docstring says when; the caller takes the statement-per-step path)."""
    params = {
        "b_cid": conv_id,
        "b_uid": user_id,
        "b_id": values["id"],
        "b_role": values["role"],
        "b_blocks": values["blocks"],
        "b_text": blk.visible_text(values["blocks"]),
        "b_created": values["created_at"],
        "b_metadata": values["metadata"],
        "b_model": values["model_id"],
    }
    if c.dialect.name == "postgresql":
        params.update(b_under=under, b_parent=parent_id, b_now=now, b_jobs=job_rows(jobs, now))
        return (await hot.execute(c, _pg_statement(), params)).first()
    if under == "given":
        params["b_parent"] = parent_id
    row = (await hot.execute(c, _sqlite_statement(under), params)).first()
    if row is not None:
        created = values["created_at"]
        await store.touch_conversation(
            c, conv_id, added=1, created_at=created, now=now, leaf=row.id
        )
        await enqueue_many(c, jobs)
    return row

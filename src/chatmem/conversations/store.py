"""SQL for conversations and messages: row CRUD and the conversation list query. Every function
takes an open connection and the owner's id.

Counters change by relative updates in the same transaction as the rows they count. The
statements that walk or reshape the message tree (paths, siblings, subtrees, jump pointers, round
deletion, fork copies) are in ``tree_store.py``.
"""

from __future__ import annotations

import functools

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ClauseElement

from ..db import hot
from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import unindexed
from ..db.engine import in_write_transaction, reuse_key_check_plans
from ..db.ids import new_id
from ..errors import Unprocessable, found
from ..workspaces.store import in_workspace, visible
from . import blocks as blk
from . import dag, forks, tree_store

C = t.conversations.c
M = t.messages.c


async def get_conversation(
    c: AsyncConnection,
    user_id: str,
    cid: str,
    *,
    for_update: bool = False,
    for_share: bool = False,
    for_change: bool = False,
    pending_ok: bool = False,
):
    """The conversation if the user may see it (their own, or a workspace one they may see:
    workspaces/store.visible); NotFound otherwise. Locked on PostgreSQL with ``for_update`` or
    ``for_share`` (a fork: no change of the source's messages while it plans its copy).

    A fork whose copy has not run (``forks.py``) is copied first when ``c`` is a write
    transaction; a read raises ``forks.ForkPending`` unless ``pending_ok`` (the caller reads only
    the row, or reads the copy from its source: ``fork_store.copy_rows``). ``for_change``
    (``for_update``, and more) says the caller changes the conversation's messages: its pending
    forks are copied first — found by a statement after the lock, whose snapshot holds any fork
    that committed while this waited for it."""
    locked = "update" if for_update or for_change else "share" if for_share else None
    lock = locked if c.dialect.name == "postgresql" else None
    q = _conversation_statement(lock)
    params = {"b_cid": cid, "b_uid": user_id}
    row = found((await hot.execute(c, q, params)).first(), "conversation not found")
    if row.fork_source_id is not None and not pending_ok:
        if not in_write_transaction(c):
            raise forks.ForkPending(cid)
        await forks.settle_in(c, cid)
        row = found((await hot.execute(c, q, params)).first(), "conversation not found")
    if for_change:
        await forks.settle_sources_in(c, cid)
    return row


@functools.cache
def _conversation_statement(lock: str | None):
    """``get_conversation``'s SELECT, built once (with ``FOR UPDATE``, ``FOR SHARE`` or none):
    the visibility test's OR/EXISTS tree cost ~0.3 ms of CPU to build per call (every request
    reads it)."""
    q = select(t.conversations).where(
        C.id == bindparam("b_cid"), visible(C, bindparam("b_uid", type_=String))
    )
    return q.with_for_update(read=lock == "share") if lock else q


async def find_message(c: AsyncConnection, conv_id: str, mid: str):
    """The message of the conversation (the caller checked the conversation), or None."""
    q = select(t.messages).where(M.id == mid, M.conversation_id == conv_id)
    return (await c.execute(q)).first()


async def get_message(c: AsyncConnection, conv_id: str, mid: str):
    return found(await find_message(c, conv_id, mid), "message not found")


async def inline_anchor(c: AsyncConnection, user_id: str, source_conv: str, mid: str):
    """(id, role, blocks) of the message an inline thread quotes, in the user's own source
    conversation; None when it is gone."""
    q = (
        select(M.id, M.role, M.blocks)
        .join(t.conversations, C.id == M.conversation_id)
        .where(M.id == mid, M.conversation_id == source_conv, C.user_id == user_id)
    )
    return (await c.execute(q)).first()


async def insert_conversation(c: AsyncConnection, user_id: str, **values) -> str:
    return (await insert_conversation_row(c, user_id, **values)).id


async def insert_conversation_row(c: AsyncConnection, user_id: str, **values):
    """Insert a conversation and give its stored row (INSERT … RETURNING, no read-back)."""
    now = values.pop("now", None) or now_ms()
    row = dict(id=new_id("c"), user_id=user_id, created_at=now, updated_at=now, **values)
    return (await hot.execute(c, _INSERT_CONVERSATION, row)).one()


#: The columns come from each call's parameters; the statement objects are built once.
_INSERT_CONVERSATION = insert(t.conversations).returning(*t.conversations.c)
_INSERT_MESSAGE = insert(t.messages).returning(*t.messages.c)


def _authored(conv, speaker: str, extra: dict) -> str:
    """The message row's ``user_id``. In a shared (workspace) conversation the row belongs to the
    conversation's creator like every row of it (scoping, deletion) and ``author_id`` records who
    spoke, or who asked for an answer; personal rows leave ``author_id`` empty (seed 001)."""
    if not conv.workspace_id:
        return speaker
    extra["author_id"] = speaker
    return conv.user_id


def _parent_place_statement():
    j = t.messages.alias("j")
    return (
        select(M.conversation_id, M.depth, M.jump_id, M.jump_depth, j.c.jump_id, j.c.jump_depth)
        .outerjoin(j, j.c.id == M.jump_id)
        .where(M.id == bindparam("b_pid"))
    )


#: ``_child_place``'s read, built once (an alias costs ~1 ms of CPU to build per call)
_PARENT_PLACE = _parent_place_statement()


async def _child_place(c: AsyncConnection, conv_id: str, parent_id: str | None) -> dict:
    """The ``depth`` (a position: the parent's + 1; docs/data-model.md) and jump pointer
    (``dag.jump_for``) of a new child of ``parent_id`` (0 and no pointer for a root); the parent
    must be in the conversation. One statement: the parent's row joined with its jump's row (a
    jump a round deletion removed joins nothing, and the child then points at its parent)."""
    if parent_id is None:
        return {"depth": 0}
    prow = (await hot.execute(c, _PARENT_PLACE, {"b_pid": parent_id})).first()
    if prow is None or prow[0] != conv_id:
        raise Unprocessable(
            "parent message not found in this conversation",
            code="invalid_parent",
            details={"parent_id": parent_id},
        )
    jump = dag.jump_for(parent_id, prow[1], (prow[2], prow[3]), (prow[4], prow[5]))
    return {"depth": prow[1] + 1, "jump_id": jump[0], "jump_depth": jump[1]}


def _held_place(parent_id: str, parent_depth: int, parent_jump: dag.Jump) -> dict:
    """``_child_place`` when the caller holds the parent's row: the one thing ``dag.jump_for``
    still needs, the pointer of the parent's jump, is read inside the INSERT (scalar
    subqueries), so no statement is added."""
    pj, pjd = parent_jump
    if pj is None or pjd is None:  # the parent has no pointer: point at it (``jump_for``)
        return {"depth": parent_depth + 1, "jump_id": parent_id, "jump_depth": parent_depth}
    j = t.messages.alias("j")
    jj = func.coalesce(select(j.c.jump_id).where(j.c.id == pj).scalar_subquery(), pj)
    jjd = func.coalesce(select(j.c.jump_depth).where(j.c.id == pj).scalar_subquery(), pjd)
    over = literal(pjd - (parent_depth - pjd), BigInteger) == jjd  # equal spans: jump over both
    return {
        "depth": parent_depth + 1,
        "jump_id": case((over, jj), else_=parent_id),
        "jump_depth": case((over, jjd), else_=parent_depth),
    }


async def insert_message(
    c: AsyncConnection,
    conv,
    *,
    parent_id: str | None,
    role: str,
    blocks: list[dict],
    user_id: str,
    status: str = "complete",
    move_leaf: bool = True,
    now: int | None = None,
    created_at: int | None = None,
    parent_depth: int | None = None,
    parent_jump: dag.Jump = (None, None),
    touch: bool = True,
    siblings: bool = False,
    **extra,
):
    """Append one message under ``parent_id`` (validated to be in the conversation), dated
    ``created_at`` (default ``now``: imported history keeps its own dates, so times along a path
    need not grow). ``last_message_at`` is the newest message time, never moved backwards.
    ``parent_depth``: the parent's depth when the caller holds the parent's row (it just wrote
    or checked it in this transaction), which spares reading it again; then ``parent_jump`` is
    that row's (jump_id, jump_depth), for the new jump pointer. ``touch=False``: the
    conversation row is left to the caller (``touch_conversation``, once for several messages).
    ``siblings``: the row comes with ``siblings_json`` (``tree_store.returned_branch_info``
    reads its branch info without another statement; not with ``parent_depth``)."""
    now = now or now_ms()
    created_at = now if created_at is None else created_at
    if parent_depth is None or parent_id is None:
        place = await _child_place(c, conv.id, parent_id)
    else:
        place = _held_place(parent_id, parent_depth, parent_jump)
    mid = extra.pop("id", None) or new_id("msg")
    user_id = _authored(conv, user_id, extra)
    # RETURNING hands back the stored row (defaults included) with the INSERT: no re-read
    values = dict(
        id=mid,
        conversation_id=conv.id,
        parent_id=parent_id,
        role=role,
        blocks=blocks,
        search_text=blk.visible_text(blocks),
        status=status,
        created_at=created_at,
        user_id=user_id,
        agent_id=conv.agent_id,
        **place,
        **extra,
    )
    if not any(isinstance(v, ClauseElement) for v in place.values()):  # plain values:
        q = _insert_with_siblings(c.dialect.name) if siblings else _INSERT_MESSAGE  # built once,
        row = await hot.execute(c, q, values)  # (its columns from the parameters)
    else:  # _held_place's subqueries
        row = await c.execute(insert(t.messages).values(**values).returning(*t.messages.c))
    stored = row.one()
    if touch:
        leaf = mid if move_leaf else None
        await touch_conversation(c, conv.id, added=1, created_at=created_at, now=now, leaf=leaf)
    return stored


#: Values of optional message columns for a row of ``insert_messages`` that does not set them
#: (one multi-row INSERT names the same columns for every row): the columns' own defaults.
_ROW_DEFAULTS = {
    "provider": "",
    "model_id": "",
    "model_label": "",
    "fast": 0,
    "metadata": {},
    "author_id": "",
}


async def insert_messages(c: AsyncConnection, conv, rows: list[dict]) -> dict:
    """Several messages in one INSERT … RETURNING (a turn's question and its answer's
    placeholder: one statement instead of two); id → stored row. Each row carries its own
    ``id``, ``parent_id``, ``role``, ``blocks``, ``status``, ``created_at``, speaker ``user_id``
    and place (``depth``, ``jump_id``, ``jump_depth``: ``dag.chain_places``), plus optional
    columns of ``_ROW_DEFAULTS``; the caller has checked the parents. The conversation row is
    the caller's (``touch_conversation``)."""
    values = message_rows(conv, rows)
    # one multi-row INSERT (SQLAlchemy's insertmanyvalues: RETURNING with a list of rows), of a
    # statement compiled once; rows in VALUES were compiled anew on every call
    return {r.id: r for r in (await hot.execute(c, _INSERT_MESSAGE, values)).all()}


def message_rows(conv, rows: list[dict]) -> list[dict]:
    """``insert_messages``' rows as inserted: the owner and author (``_authored``), the
    conversation's columns, ``search_text``, and every row naming the same columns
    (``_ROW_DEFAULTS``)."""
    values = []
    for r in rows:
        extra: dict = {}
        row = {k: v for k, v in r.items() if k != "user_id"}
        row["user_id"] = _authored(conv, r["user_id"], extra)
        row.update(extra, conversation_id=conv.id, agent_id=conv.agent_id)
        row["search_text"] = blk.visible_text(r["blocks"])
        values.append(row)
    keys = set().union(*values)
    for row in values:
        for k in keys - row.keys():
            row[k] = _ROW_DEFAULTS[k]
    return values


@functools.cache
def _insert_with_siblings(dialect: str):
    return insert(t.messages).returning(*t.messages.c, tree_store.siblings_json(dialect))


async def touch_conversation(
    c: AsyncConnection,
    conv_id: str,
    *,
    added: int,
    created_at: int,
    now: int,
    leaf: str | None,
    returning: bool = False,
):
    """Count ``added`` new messages (the newest dated ``created_at``) and, given ``leaf``, make it
    the active leaf: the conversation-row half of ``insert_message``. ``returning``: give the
    updated row (RETURNING: what a read right after would see, without the read)."""
    params = {"b_cid": conv_id, "b_added": added, "b_created": created_at, "b_now": now}
    if leaf is not None:
        params["b_leaf"] = leaf
    q = _touch_statement(leaf is not None, returning)
    if not returning:
        await hot.execute(c, q, params)
        return None
    return (await hot.execute(c, q, params)).one()


def counted(created_at, added) -> dict:
    """The conversation row's SET for ``added`` new messages, the newest dated ``created_at``
    (both expressions): ``last_message_at`` never moves backwards; ``updated_at`` is the
    ``b_now`` parameter."""
    newest = case(
        (or_(C.last_message_at.is_(None), C.last_message_at < created_at), created_at),
        else_=C.last_message_at,
    )
    return {
        "message_count": C.message_count + added,
        "last_message_at": newest,
        "updated_at": bindparam("b_now", type_=C.updated_at.type),
    }


@functools.cache
def _touch_statement(with_leaf: bool, returning: bool):
    """``touch_conversation``'s UPDATE per shape, built once (CASE and arithmetic: ~0.3 ms of
    CPU to build per call)."""
    created_at = bindparam("b_created", type_=C.last_message_at.type)
    values = counted(created_at, bindparam("b_added", type_=Integer))
    if with_leaf:
        values["active_leaf_id"] = bindparam("b_leaf", type_=C.active_leaf_id.type)
    q = update(t.conversations).where(C.id == bindparam("b_cid")).values(**values)
    return q.returning(*t.conversations.c) if returning else q


async def rows_by_ids(c: AsyncConnection, ids: list[str]) -> list:
    """Message rows in the order of ``ids`` (prefer ``path_rows`` for a path: one statement)."""
    if not ids:
        return []
    rows = (await c.execute(select(t.messages).where(M.id.in_(ids)))).all()
    order = {mid: i for i, mid in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r.id])


async def all_messages(c: AsyncConnection, conv_id: str) -> list:
    q = select(t.messages).where(M.conversation_id == conv_id).order_by(M.created_at, M.id)
    return list((await c.execute(q)).all())


async def set_leaf(
    c: AsyncConnection, conv_id: str, leaf: str | None, *, touch: bool = True
) -> None:
    values: dict = {"active_leaf_id": leaf}
    if touch:
        values["updated_at"] = now_ms()
    await c.execute(update(t.conversations).where(C.id == conv_id).values(**values))


async def update_content(c: AsyncConnection, mid: str, blocks: list[dict]) -> None:
    await c.execute(
        update(t.messages)
        .where(M.id == mid)
        .values(blocks=blocks, search_text=blk.visible_text(blocks))
    )


def prune_summary_blocks(blocks: list | None, gone: frozenset[str]) -> list | None:
    """Summary blocks minus those anchored on (or starting at) a deleted message; None = unchanged."""
    blocks = list(blocks or [])
    keep = [
        b
        for b in blocks
        if not isinstance(b, dict)
        or (b.get("anchor_message_id") not in gone and b.get("from_message_id") not in gone)
    ]
    return keep if len(keep) != len(blocks) else None


async def detach_messages(c: AsyncConnection, conv_ids) -> None:
    """Clear parent links of the given conversations' messages before deleting them.

    ``messages.parent_id`` cascades, and SQLite runs each cascade level as a nested trigger (limit
    1,000), so deleting a deep chain through the cascade fails; with the links cleared every
    message goes in one flat cascade.
    """
    await c.execute(
        update(t.messages)
        .where(M.conversation_id.in_(conv_ids), M.parent_id.is_not(None))
        .values(parent_id=None)
    )


async def rows_of(c: AsyncConnection, q) -> list:
    """The rows of a query built here (``list_query``)."""
    return list((await c.execute(q)).all())


async def update_conversation(c: AsyncConnection, cid: str, **values) -> None:
    await c.execute(update(t.conversations).where(C.id == cid).values(**values))


async def inline_thread_ids(c: AsyncConnection, cid: str) -> list[str]:
    """The inline threads anchored in conversation ``cid`` (they go with it; in a workspace
    conversation several members may have opened threads on it)."""
    q = select(C.id).where(C.inline_source_conv == cid)
    return list((await c.execute(q)).scalars().all())


async def delete_conversations(c: AsyncConnection, ids: list[str]) -> None:
    """Delete conversations (callers checked ownership; detach_messages first on deep trees).
    Their messages go by cascade, each with its own rows (``reuse_key_check_plans``: about
    half the time on PostgreSQL, docs/data-model.md)."""
    async with reuse_key_check_plans(c):
        await c.execute(delete(t.conversations).where(C.id.in_(ids)))


def list_query(
    user_id: str,
    *,
    archived: bool | None,
    starred: bool | None,
    project_id: str | None,
    agent_id: str | None,
    cursor: tuple | None,
    limit: int,
    workspace_id: str = "",
):
    """Personal conversations, or with ``workspace_id`` the ones of that workspace the user may
    see (the caller checked membership; workspace rows have no archive view)."""
    if workspace_id:
        q = select(t.conversations).where(
            in_workspace(C, workspace_id, user_id), C.inline_source_conv == ""
        )
        archived = False
    else:
        q = select(t.conversations).where(
            C.user_id == user_id, C.inline_source_conv == "", unindexed(C.workspace_id) == ""
        )
    q = q.where(C.archived == (1 if archived else 0))
    if starred is not None:
        q = q.where(C.starred == (1 if starred else 0))
    if project_id is not None:
        q = q.where(C.project_id == project_id)
    if agent_id is not None:
        q = q.where(C.agent_id == agent_id)
    if cursor is not None:
        pinned, updated, cid = cursor
        q = q.where(
            or_(
                C.pinned < pinned,
                and_(C.pinned == pinned, C.updated_at < updated),
                and_(C.pinned == pinned, C.updated_at == updated, C.id < cid),
            )
        )
    return q.order_by(C.pinned.desc(), C.updated_at.desc(), C.id.desc()).limit(limit + 1)

"""SQL for conversations and messages. Every function takes an open connection and the owner's id.

Reads of the active path walk parent links with a recursive CTE bounded by the page size, so a
page costs the same at depth 10 and at depth 10,000; counters change by relative updates in the
same transaction as the rows they count.
"""

from __future__ import annotations

import itertools

from sqlalchemy import (
    BigInteger,
    Integer,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import unindexed
from ..db.ids import id_block, new_id
from ..errors import Unprocessable, found
from ..workspaces.store import in_workspace, visible
from . import blocks as blk
from . import dag

C = t.conversations.c
M = t.messages.c


async def get_conversation(c: AsyncConnection, user_id: str, cid: str, *, for_update: bool = False):
    """The conversation if the user may see it (their own, or a workspace one they may see:
    workspaces/store.visible); NotFound otherwise."""
    q = select(t.conversations).where(C.id == cid, visible(C, user_id))
    if for_update and c.dialect.name == "postgresql":
        q = q.with_for_update()
    return found((await c.execute(q)).first(), "conversation not found")


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
    stmt = insert(t.conversations).values(
        id=new_id("c"), user_id=user_id, created_at=now, updated_at=now, **values
    )
    return (await c.execute(stmt.returning(*t.conversations.c))).one()


def _authored(conv, speaker: str, extra: dict) -> str:
    """The message row's ``user_id``. In a shared (workspace) conversation the row belongs to the
    conversation's creator like every row of it (scoping, deletion) and ``author_id`` records who
    spoke, or who asked for an answer; personal rows leave ``author_id`` empty (seed 001)."""
    if not conv.workspace_id:
        return speaker
    extra["author_id"] = speaker
    return conv.user_id


async def _child_place(c: AsyncConnection, conv_id: str, parent_id: str | None) -> dict:
    """The ``depth`` and jump pointer (``dag.jump_for``) of a new child of ``parent_id`` (depth 0
    and no pointer for a root); the parent must be in the conversation. One statement: the
    parent's row joined with its jump's row."""
    if parent_id is None:
        return {"depth": 0}
    j = t.messages.alias("j")
    q = (
        select(M.conversation_id, M.depth, M.jump_id, M.jump_depth, j.c.jump_id, j.c.jump_depth)
        .outerjoin(j, j.c.id == M.jump_id)
        .where(M.id == parent_id)
    )
    prow = (await c.execute(q)).first()
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
    **extra,
):
    """Append one message under ``parent_id`` (validated to be in the conversation), dated
    ``created_at`` (default ``now``: imported history keeps its own dates, so times along a path
    need not grow). ``last_message_at`` is the newest message time, never moved backwards.
    ``parent_depth``: the parent's depth when the caller holds the parent's row (it just wrote
    or checked it in this transaction), which spares reading it again; then ``parent_jump`` is
    that row's (jump_id, jump_depth), for the new jump pointer. ``touch=False``: the
    conversation row is left to the caller (``touch_conversation``, once for several messages)."""
    now = now or now_ms()
    created_at = now if created_at is None else created_at
    if parent_depth is None or parent_id is None:
        place = await _child_place(c, conv.id, parent_id)
    else:
        place = _held_place(parent_id, parent_depth, parent_jump)
    mid = extra.pop("id", None) or new_id("msg")
    user_id = _authored(conv, user_id, extra)
    # RETURNING hands back the stored row (defaults included) with the INSERT: no re-read
    row = await c.execute(
        insert(t.messages)
        .values(
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
        .returning(*t.messages.c)
    )
    stored = row.one()
    if touch:
        leaf = mid if move_leaf else None
        await touch_conversation(c, conv.id, added=1, created_at=created_at, now=now, leaf=leaf)
    return stored


async def touch_conversation(
    c: AsyncConnection, conv_id: str, *, added: int, created_at: int, now: int, leaf: str | None
) -> None:
    """Count ``added`` new messages (the newest dated ``created_at``) and, given ``leaf``, make it
    the active leaf: the conversation-row half of ``insert_message``."""
    newest = case(
        (or_(C.last_message_at.is_(None), C.last_message_at < created_at), created_at),
        else_=C.last_message_at,
    )
    values = {
        "message_count": C.message_count + added,
        "last_message_at": newest,
        "updated_at": now,
    }
    if leaf is not None:
        values["active_leaf_id"] = leaf
    await c.execute(update(t.conversations).where(C.id == conv_id).values(**values))


def _path_cte(conv_id: str, start: str, limit: int, cols: tuple[str, ...] = ("id", "parent_id")):
    """Recursive CTE of message ``cols`` plus ``n`` walking parent links up from ``start``
    (n = 1 at ``start``, at most ``limit``).

    Each step is one primary-key lookup, so the cost depends on ``limit``, not on the depth.
    On PostgreSQL the CTE carries every column the caller needs, so nothing joins back to
    ``messages`` (a join it would run, without fresh statistics, as a scan of the whole table);
    SQLite joins back by primary key, which is cheaper there than carrying the rows.
    """
    seed = select(*(M[k] for k in cols), literal(1, Integer).label("n")).where(
        M.id == start, M.conversation_id == conv_id
    )
    path = seed.cte("path", recursive=True)
    m = t.messages.alias("m")
    return path.union_all(
        select(*(m.c[k] for k in cols), (path.c.n + 1).label("n")).where(
            m.c.id == path.c.parent_id, path.c.n < limit
        )
    )


_ALL = tuple(col.name for col in t.messages.c)


async def path_rows(c: AsyncConnection, conv_id: str, start: str | None, limit: int) -> list:
    """Full message rows on the path from ``start`` up towards the root, at most ``limit``,
    oldest first — one statement, whatever the depth."""
    if start is None or limit <= 0:
        return []
    if c.dialect.name == "postgresql":
        path = _path_cte(conv_id, start, limit, _ALL)
        q = select(*(path.c[k] for k in _ALL)).order_by(path.c.n.desc())
    else:
        path = _path_cte(conv_id, start, limit)
        q = select(t.messages).join(path, M.id == path.c.id).order_by(path.c.n.desc())
    return list((await c.execute(q)).all())


async def path_ids(c: AsyncConnection, conv_id: str, start: str | None, limit: int) -> list[str]:
    """Ids on the path from ``start`` up towards the root, at most ``limit``, oldest first."""
    if start is None or limit <= 0:
        return []
    path = _path_cte(conv_id, start, limit)
    rows = (await c.execute(select(path.c.id).order_by(path.c.n.desc()))).all()
    return [r.id for r in rows]


async def path_oldest_ids(
    c: AsyncConnection, conv_id: str, start: str | None, limit: int, count: int
) -> list[str]:
    """The ``count`` ids furthest from ``start`` among the first ``limit`` on its path up,
    oldest first: with ``limit`` = the depth span to a known ancestor, the oldest messages below
    it (the walk costs ``limit`` index lookups; only ``count`` ids come back)."""
    if start is None or limit <= 0 or count <= 0:
        return []
    path = _path_cte(conv_id, start, limit)
    q = select(path.c.id).where(path.c.n > limit - count).order_by(path.c.n.desc())
    return [r.id for r in (await c.execute(q)).all()]


async def rows_by_ids(c: AsyncConnection, ids: list[str]) -> list:
    """Message rows in the order of ``ids`` (prefer ``path_rows`` for a path: one statement)."""
    if not ids:
        return []
    rows = (await c.execute(select(t.messages).where(M.id.in_(ids)))).all()
    order = {mid: i for i, mid in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r.id])


async def _children_of(c: AsyncConnection, parent_ids: list[str], *cols: str) -> list:
    """Columns ``cols`` of the children of ``parent_ids``, unordered: one index probe per parent.

    (A parent's children are always in its conversation, so no conversation filter: with one, or
    with ``ORDER BY created_at``, either planner may walk the conversation's index instead.)
    PostgreSQL gets the probes through a LATERAL subquery over the id array (``OFFSET 0`` keeps it
    a parameterised index scan): ``parent_id IN (…)`` without fresh statistics is planned as a
    scan of the whole table, and a UNION of equalities grows costly enough to launch parallel
    workers. SQLite's planner probes the parent index for ``IN``.
    """
    if not parent_ids:
        return []
    if c.dialect.name == "postgresql":
        sel = ", ".join(f"ch.{k}" for k in cols)
        inner = ", ".join(f"m.{k}" for k in cols)
        sql = text(f"""SELECT {sel} FROM unnest(CAST(:ids AS TEXT[])) AS v(pid)
                       CROSS JOIN LATERAL (SELECT {inner} FROM messages m
                                           WHERE m.parent_id = v.pid OFFSET 0) ch""")
        return list((await c.execute(sql, {"ids": list(parent_ids)})).all())
    q = select(*(M[k] for k in cols)).where(M.parent_id.in_(list(parent_ids)))
    return list((await c.execute(q)).all())


async def branch_info_for(c: AsyncConnection, conv_id: str, rows: list) -> dict[str, dict]:
    """Sibling lists for the given messages, with one query over their parents' children."""
    if not rows:
        return {}
    parents = {r.parent_id for r in rows}
    real = sorted(p for p in parents if p is not None)
    found = await _children_of(c, real, "id", "parent_id", "created_at")
    if None in parents:  # roots (a separate statement: an OR defeats the index on SQLite)
        cols = (M.id, M.parent_id, M.created_at)
        q = select(*cols).where(M.conversation_id == conv_id, M.parent_id.is_(None))
        found.extend((await c.execute(q)).all())
    children: dict[str | None, list[str]] = {}
    for r in sorted(found, key=lambda r: (r.created_at, r.id)):
        children.setdefault(r.parent_id, []).append(r.id)
    return dag.branch_info([r.id for r in rows], {r.id: r.parent_id for r in rows}, children)


async def all_messages(c: AsyncConnection, conv_id: str) -> list:
    q = select(t.messages).where(M.conversation_id == conv_id).order_by(M.created_at, M.id)
    return list((await c.execute(q)).all())


def _subtree_cte(dialect: str) -> str:
    """``sub(id, parent_id, created_at)``: the subtree of ``:start`` (in ``:cid``), walked down.

    Each level is an index probe on ``parent_id``. PostgreSQL gets the probe through a LATERAL
    subquery (``OFFSET 0`` keeps it from being flattened into a join): without fresh statistics
    its planner would otherwise hash-join a full scan of ``messages`` at every level — seconds
    for a 10,000-deep chain. SQLite's planner probes the index for the plain join.
    """
    if dialect == "postgresql":
        step = """SELECT ch.id, ch.parent_id, ch.created_at FROM sub CROSS JOIN LATERAL (
                      SELECT m.id, m.parent_id, m.created_at FROM messages m
                      WHERE m.parent_id = sub.id OFFSET 0) ch"""
    else:
        step = """SELECT m.id, m.parent_id, m.created_at FROM messages m
                  JOIN sub ON m.parent_id = sub.id"""
    return f"""WITH RECURSIVE sub(id, parent_id, created_at) AS (
        SELECT id, parent_id, created_at FROM messages WHERE id = :start AND conversation_id = :cid
        UNION ALL
        {step}
    )"""


async def newest_descendant_walk(c: AsyncConnection, conv_id: str, start: str) -> str | None:
    """``newest_descendant`` by walking the whole subtree down: O(size of the subtree). The
    reference the fast path is tested against, and its fallback should the pointers disagree."""
    sql = (
        _subtree_cte(c.dialect.name)
        + """
        SELECT sub.id FROM sub
        WHERE NOT EXISTS (SELECT 1 FROM sub kid WHERE kid.parent_id = sub.id)
        ORDER BY sub.created_at DESC, sub.id DESC LIMIT 1"""
    )
    return (await c.execute(text(sql), {"start": start, "cid": conv_id})).scalar()


#: how many of the conversation's messages (newest first) ``newest_by_jumps`` reads per step; a
#: window bounds the rows read (asking for *leaves* instead would read a chain with three leaves
#: to its root), and growing windows keep the statements few when the answer is old
WINDOWS = (16, 128, 1024, 8192)


async def newest_descendant(c: AsyncConnection, conv_id: str, start: str) -> str | None:
    """The most recently written leaf in ``start``'s subtree (``start`` itself when it is a leaf).

    Leaves only, so clock skew between writers can never land the pointer mid-branch. Without
    walking the subtree: the conversation's messages are read newest first (the (conversation,
    created_at) index, a child probe each), a window at a time, and the first leaf whose
    ancestor at ``start``'s depth is ``start`` wins — found by a level-ancestor walk over the jump
    pointers (``dag.jump_for``), O(log depth) lookups per leaf. The cost follows the messages
    newer than the answer, not the size of the subtree: a switch near the root of a 10,000-deep
    path costs what one near its leaf does (switching to a branch whose newest leaf is old still
    reads every newer message once — as the subtree walk did at worst).
    """
    row = (
        await c.execute(select(M.depth).where(M.id == start, M.conversation_id == conv_id))
    ).first()
    if row is None:
        return None
    leaf = await newest_by_jumps(c, conv_id, start, row.depth)
    # None is unreachable while the pointers are right (``start``'s subtree has a leaf); should
    # they ever be wrong, answer as the walk does rather than lose the branch
    return leaf if leaf is not None else await newest_descendant_walk(c, conv_id, start)


async def newest_by_jumps(c: AsyncConnection, conv_id: str, start: str, depth: int) -> str | None:
    """``newest_descendant`` of ``start`` (at ``depth``) from the leaves and the jump pointers
    alone: None when no leaf descends from it (only if the pointers were wrong)."""
    after: tuple | None = None
    for i in itertools.count():
        size = WINDOWS[min(i, len(WINDOWS) - 1)]
        rows = await _newest_messages(c, conv_id, after, size)
        leaves = [r.id for r in rows if not r.has_kids and r.depth >= depth]
        hits = await _descending_from(c, start, depth, leaves)
        for mid in leaves:
            if mid in hits:
                return mid
        if len(rows) < size:
            return None
        after = (rows[-1].created_at, rows[-1].id)
    return None  # pragma: no cover - itertools.count never ends


async def _newest_messages(
    c: AsyncConnection, conv_id: str, after: tuple | None, limit: int
) -> list:
    """(id, created_at, depth, has_kids) of the conversation's ``limit`` newest messages older
    than ``after`` (a (created_at, id) key) when given.

    Read in the order of ``idx_messages_conv_created`` (conversation, created_at; ties by id):
    the scan stops after about ``limit`` rows. The child probe is one index lookup per row
    (``OFFSET 0`` keeps PostgreSQL from turning it into a hash join over every message)."""
    ch = t.messages.alias("ch")
    kids = select(ch.c.id).where(ch.c.parent_id == M.id).offset(0).exists()
    q = select(M.id, M.created_at, M.depth, kids.label("has_kids")).where(
        M.conversation_id == conv_id
    )
    if after is not None:
        q = q.where(tuple_(M.created_at, M.id) < tuple_(*after))
    q = q.order_by(M.created_at.desc(), M.id.desc()).limit(limit)
    return list((await c.execute(q)).all())


def _up_step(dialect: str) -> str:
    """The recursive step of ``_descending_from``: the jump when it does not overshoot the target
    depth, else the parent (``dag.level_ancestor_step``); PostgreSQL probes through LATERAL
    (``_subtree_cte`` says why)."""
    nxt = """CASE WHEN up.jump_id IS NOT NULL AND up.jump_depth >= :d AND up.jump_depth < up.depth
                  THEN up.jump_id ELSE up.parent_id END"""
    cols = "m.id, m.parent_id, m.depth, m.jump_id, m.jump_depth"
    if dialect == "postgresql":
        return f"""SELECT up.leaf, ch.* FROM up CROSS JOIN LATERAL (
                       SELECT {cols} FROM messages m WHERE m.id = {nxt} OFFSET 0) ch
                   WHERE up.depth > :d"""
    return f"SELECT up.leaf, {cols} FROM up JOIN messages m ON m.id = {nxt} WHERE up.depth > :d"


async def _descending_from(
    c: AsyncConnection, start: str, depth: int, leaves: list[str]
) -> set[str]:
    """Which of ``leaves`` have ``start`` (at ``depth``) as ancestor or are ``start``: each walks
    up to ``depth`` over the jump pointers, in one statement for all. (``leaves`` come from the
    conversation: a conversation filter here made SQLite scan the conversation's index instead
    of probing the ids.)"""
    if not leaves:
        return set()
    sql = text(
        f"""WITH RECURSIVE up(leaf, id, parent_id, depth, jump_id, jump_depth) AS (
            SELECT id, id, parent_id, depth, jump_id, jump_depth FROM messages WHERE id IN :leaves
            UNION ALL
            {_up_step(c.dialect.name)}
        ) SELECT leaf FROM up WHERE id = :start"""
    ).bindparams(bindparam("leaves", expanding=True))
    params = {"leaves": leaves, "start": start, "d": depth}
    return set((await c.execute(sql, params)).scalars().all())


async def newest_leaf(c: AsyncConnection, conv_id: str) -> str | None:
    """The most recently written leaf of the whole conversation (None when it is empty)."""
    ch = t.messages.alias("ch")
    q = (
        select(M.id)
        .where(
            M.conversation_id == conv_id, ~select(ch.c.id).where(ch.c.parent_id == M.id).exists()
        )
        .order_by(M.created_at.desc(), M.id.desc())
        .limit(1)
    )
    return (await c.execute(q)).scalar()


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


def _nodes(rows) -> list[dag.Node]:
    return [dag.Node(r.id, r.parent_id, r.role, r.status) for r in rows]


async def children_nodes(
    c: AsyncConnection, conv_id: str, parent_ids: list[str]
) -> dict[str, list[dag.Node]]:
    if not parent_ids:
        return {}
    found = await _children_of(
        c, list(parent_ids), "id", "parent_id", "role", "status", "created_at"
    )
    found.sort(key=lambda r: (r.created_at, r.id))
    out: dict[str, list[dag.Node]] = {}
    for n in _nodes(found):
        if n.parent_id is not None:
            out.setdefault(n.parent_id, []).append(n)
    return out


#: The depth shift of a moved subtree, with its jump pointers kept exact: a pointer into the
#: subtree rises with it, one into the deleted round (depths ``lo`` < d <= ``top``) now points at
#: the round's parent (``np``, at depth ``lo``; none when the round was a root), one above stays.
_SHIFT = """
    UPDATE messages SET depth = depth - :shift,
        jump_id = CASE WHEN jump_depth > :top THEN jump_id
                       WHEN jump_depth > :lo THEN CAST(:np AS TEXT) ELSE jump_id END,
        jump_depth = CASE WHEN jump_depth > :top THEN jump_depth - :shift
                          WHEN jump_depth > :lo THEN CAST(:npd AS BIGINT) ELSE jump_depth END
    WHERE id IN (SELECT id FROM sub)"""


async def apply_round_delete(c: AsyncConnection, conv_id: str, plan: dag.RoundPlan) -> int:
    """Move surviving children to the round's parent, fix their depths (exact: the distance to
    the root, which the API shows and the memory cursor counts with) and jump pointers, delete
    the round. The shift rewrites every message below the round — O(that subtree)."""
    lo = -1
    if plan.new_parent is not None:
        lo = (await c.execute(select(M.depth).where(M.id == plan.new_parent))).scalar_one()
    for child, new_parent in plan.reparent.items():
        await c.execute(update(t.messages).where(M.id == child).values(parent_id=new_parent))
        shift = plan.depth_shift[child]
        params = {"start": child, "cid": conv_id, "shift": shift, "lo": lo, "top": lo + shift}
        params.update(np=new_parent, npd=lo if new_parent is not None else None)
        await c.execute(text(_subtree_cte(c.dialect.name) + _SHIFT), params)
    members = and_(M.conversation_id == conv_id, M.id.in_(sorted(plan.delete_ids)))
    # Count first: on SQLite the rowcount of the DELETE misses rows removed by the parent_id
    # cascade (an answer goes with its question before the statement reaches it).
    n = (await c.execute(select(func.count()).select_from(t.messages).where(members))).scalar_one()
    await c.execute(delete(t.messages).where(members))
    newest = select(func.max(M.created_at)).where(M.conversation_id == conv_id).scalar_subquery()
    await c.execute(
        update(t.conversations)
        .where(C.id == conv_id)
        .values(message_count=C.message_count - n, last_message_at=newest, updated_at=now_ms())
    )
    return n


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
    """Delete conversations (callers checked ownership; detach_messages first on deep trees)."""
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


_FORK_SET = (
    "id",
    "conversation_id",
    "parent_id",
    "depth",
    "user_id",
    "agent_id",
    "jump_id",
    "jump_depth",
)


def _block_id(c: AsyncConnection, head: str, low: int, index):
    """The id ``index`` (0-based) of the block ``ids.id_block`` reserved: ``head`` + 8 hex
    digits of ``low + index`` — computed per row, so the statement binds two values whatever
    the number of copies (a bound JSON list of ids cost a parse of the list per row)."""
    n = literal(low, BigInteger) + index
    if c.dialect.name == "postgresql":
        digits = func.lpad(func.to_hex(n), 8, "0")
    else:
        digits = func.printf("%08x", n)
    return literal(head) + digits


async def copy_path(
    c: AsyncConnection, conv_id: str, start: str, limit: int, new_conv, user_id: str
) -> tuple[str | None, int]:
    """Copy the path up from ``start`` (at most ``limit`` messages) into ``new_conv`` as a chain;
    (the copy's leaf, how many of the copies are still streaming — the caller refuses those).

    ONE walk of the path, inside ONE ``INSERT … SELECT``: the rows never travel through Python (a
    fork of 10,000 messages used to decode and re-encode every row), and the count comes from the
    start's stored ``depth`` (exact: the distance to the root, kept so by every tree operation)
    instead of a second walk. The new ids are one block (``ids.id_block``) computed in the
    statement: the copy at depth d takes the d-th, its parent the (d-1)-th; each copy's jump
    pointer is the copy of its source's (``_copied`` then reads the counters back)."""
    row = (
        await c.execute(select(M.depth).where(M.id == start, M.conversation_id == conv_id))
    ).first()
    if row is None or limit <= 0:
        return None, 0
    count = min(int(row.depth) + 1, limit)
    head, low = id_block("msg", count)
    cols = [k for k in _ALL if k not in _FORK_SET]
    path = _path_cte(conv_id, start, count, ("id", "parent_id"))
    m = t.messages.alias("src")
    depth = count - path.c.n  # n = 1 at ``start`` (the leaf of the copy)
    top = or_(path.c.n == count, path.c.parent_id.is_(None))
    # the copies' jump pointers: the copy of the source's jump (the path is copied whole above
    # ``start``, less the ``cut`` oldest messages a ``limit`` left out)
    cut = int(row.depth) + 1 - count
    jd = m.c.jump_depth - cut
    jumps = and_(m.c.jump_id.is_not(None), m.c.jump_depth >= cut, m.c.jump_depth < m.c.depth)
    sel = select(
        _block_id(c, head, low, depth),
        literal(new_conv.id),
        case((top, None), else_=_block_id(c, head, low, depth - 1)),
        depth,
        literal(user_id),
        literal(new_conv.agent_id),
        case((jumps, _block_id(c, head, low, jd)), else_=None),
        case((jumps, jd), else_=None),
        *(m.c[k] for k in cols),
    ).join_from(path, m, m.c.id == path.c.id)
    stmt = insert(t.messages).from_select([*_FORK_SET, *cols], sel)
    await c.execute(stmt)  # (no rowcount: on SQLite the statement starts with its WITH)
    leaf = f"{head}{low + count - 1:08x}"
    return leaf, await _copied(c, new_conv.id, leaf, user_id)


async def _copied(c: AsyncConnection, conv_id: str, leaf: str, user_id: str) -> int:
    """Set the counters and leaf of a conversation ``copy_path`` filled; how many of its
    messages are streaming — read through indexes, not the path: the count and newest time by
    (conversation, created_at), the user's streaming rows (few) by (user_id, status)."""
    mine = M.conversation_id == conv_id
    copied = select(func.count()).select_from(t.messages).where(mine).scalar_subquery()
    newest = select(func.max(M.created_at)).where(mine).scalar_subquery()
    await c.execute(
        update(t.conversations)
        .where(C.id == conv_id)
        .values(
            message_count=copied, last_message_at=newest, active_leaf_id=leaf, updated_at=now_ms()
        )
    )
    busy = (
        select(func.count())
        .select_from(t.messages)
        .where(
            M.user_id == user_id,
            M.status == "streaming",
            unindexed(M.conversation_id) == conv_id,
        )
    )
    return int((await c.execute(busy)).scalar_one())

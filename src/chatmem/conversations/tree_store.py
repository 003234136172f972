"""SQL for the shape of a conversation's message tree: paths, siblings, subtrees, jump pointers.

Why it exists: these statements walk the tree (recursive CTEs up parent links or down child
links, the level-ancestor walk over the skew-binary jump pointers of ``dag.jump_for``) and keep
it consistent when it changes shape (a round's deletion re-parents the surviving children; a
fork's copy of a path is ``fork_store.py``'s). They share the walks' dialect tricks (LATERAL probes
on PostgreSQL) and the depth/jump invariants, and none of them is row CRUD — which stays in
``store.py`` with the conversation list query. Same contract as ``store.py``: each function takes
an open connection; the caller checked the conversation is the user's.

Reads of the active path walk parent links with a recursive CTE bounded by the page size, so a
page costs the same at depth 10 and at depth 10,000.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    delete,
    func,
    literal,
    literal_column,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from ..db import schema as t
from ..db.clock import now_ms
from . import dag

C = t.conversations.c
M = t.messages.c


def _path_cte(
    conv_id: str,
    start: str,
    limit: int | None,
    cols: tuple[str, ...] = ("id", "parent_id"),
    *,
    floor: int | None = None,
):
    """Recursive CTE of message ``cols`` plus ``n`` walking parent links up from ``start``
    (n = 1 at ``start``, at most ``limit`` unless None); with ``floor`` (``cols`` then hold ``depth``) the
    walk also stops at the first message whose position is ``floor`` or less (it is included).

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
    more = [] if limit is None else [path.c.n < limit]
    if floor is not None:
        more.append(path.c.depth > floor)
    return path.union_all(
        select(*(m.c[k] for k in cols), (path.c.n + 1).label("n")).where(
            m.c.id == path.c.parent_id, *more
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
    c: AsyncConnection, conv_id: str, start: str | None, floor: int, count: int
) -> list[str]:
    """The ``count`` oldest ids on the path up from ``start`` as far as the first message at
    position ``floor`` or less (included; ``floor`` < 0: the root), oldest first: with ``floor``
    = a known message's ``depth``, that message (when it is an ancestor) and the oldest messages
    below it. Positions may skip (docs/data-model.md, ``depth``), so the walk is bounded by
    position, not by a count; it costs one index lookup per message walked, only ``count`` ids
    come back."""
    if start is None or count <= 0:
        return []
    path = _path_cte(conv_id, start, None, ("id", "parent_id", "depth"), floor=floor)
    q = select(path.c.id).order_by(path.c.n.desc()).limit(count)
    return [r.id for r in (await c.execute(q)).all()]


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
    position and its message still exists, else the parent (``dag.level_ancestor_step``).

    A pointer may name a message a round deletion removed (deleting leaves the rows below alone:
    docs/data-model.md, ``depth``): such a pointer counts as absent — the walk takes the parent,
    an ancestor still — at the cost of one more primary-key probe per usable jump. Ids are never
    reused, so a dangling pointer can never land elsewhere. PostgreSQL probes through LATERAL
    (``_subtree_cte`` says why)."""
    usable = "up.jump_depth >= :d AND up.jump_depth < up.depth"
    cols = "m.id, m.parent_id, m.depth, m.jump_id, m.jump_depth"
    if dialect == "postgresql":
        jump = f"SELECT j.id FROM messages j WHERE j.id = up.jump_id AND {usable}"
        return f"""SELECT up.leaf, ch.* FROM up CROSS JOIN LATERAL (
                       SELECT {cols} FROM messages m
                       WHERE m.id = COALESCE(({jump}), up.parent_id) OFFSET 0) ch
                   WHERE up.depth > :d"""
    return f"""SELECT up.leaf, {cols} FROM up
               LEFT JOIN messages j ON j.id = up.jump_id AND {usable}
               JOIN messages m ON m.id = COALESCE(j.id, up.parent_id)
               WHERE up.depth > :d"""


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


async def apply_round_delete(c: AsyncConnection, conv_id: str, plan: dag.RoundPlan) -> int:
    """Move surviving children to the round's parent and delete the round: O(what changes) — a
    statement per moved child, whatever lies below it.

    Nothing below a moved child is rewritten: ``depth`` is a position (it only has to grow from
    parent to child, so the moved subtrees keep theirs and the path skips the deleted levels),
    and jump pointers into the round dangle — the level-ancestor walk treats a pointer to a
    missing message as absent (``_up_step``). docs/data-model.md, ``depth``, says why."""
    for child, new_parent in plan.reparent.items():
        await c.execute(update(t.messages).where(M.id == child).values(parent_id=new_parent))
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


def siblings_json(dialect: str, parent: ColumnElement[str] | None = None):
    """A row's siblings — its parent's children — as a JSON array of ``[id, created_at]``: a
    correlated subquery for a statement's RETURNING on ``messages`` (one probe of the parent
    index), or for a SELECT of the row with ``parent`` its ``parent_id`` column, read back by
    ``returned_branch_info``. Roots get none (NULL parent)."""
    s = t.messages.alias("s")
    if dialect == "sqlite":
        agg = func.json_group_array(func.json_array(s.c.id, s.c.created_at))
    else:
        agg = func.json_agg(func.json_build_array(s.c.id, s.c.created_at))
    # spelt out: SQLAlchemy renders an INSERT's RETURNING columns unqualified (ambiguous here)
    outer: ColumnElement[str] = literal_column("messages.parent_id") if parent is None else parent
    return select(agg).where(s.c.parent_id == outer).scalar_subquery().label("siblings_json")


_UNSET = object()


def returned_branch_info(row) -> dict | None:
    """``row``'s branch info from the ``siblings_json`` its statement returned, the row itself
    included even when that statement's snapshot did not see it (PostgreSQL's INSERT … RETURNING
    does not, SQLite's does); None for a root (read it: ``branch_info_for``)."""
    raw: Any = getattr(row, "siblings_json", _UNSET)
    if row.parent_id is None or raw is _UNSET:
        return None
    pairs = dict(json.loads(raw) if isinstance(raw, str) else raw or [])
    pairs[row.id] = row.created_at
    ids = [i for i, _at in sorted(pairs.items(), key=lambda p: (p[1], p[0]))]
    return dag.branch_info([row.id], {row.id: row.parent_id}, {row.parent_id: ids})[row.id]

"""SQL of a fork: plan the copy of a path, mark a conversation pending, copy, read a pending copy.

Why it exists: a fork answers before its rows are copied (migration 0023, ``forks.py``). The
fork's own transaction runs ``plan_copy`` — ONE narrow walk of the source's path that counts
what the copy will hold, finds its lowest position, its newest time and whether a message on it
still streams — and ``mark_pending`` writes the new conversation's counters, leaf and plan. The
copy itself (``copy_planned``: one ``INSERT … SELECT``, the rows never travel through Python)
runs after the fork commits, and ``copy_rows`` shows the first page of the copy, from the
source's rows, exactly as it will be stored, while it has not run yet.

The copy of the message at position p takes the (p - cut)-th id of a block reserved when the fork
was planned (``ids.id_block``): so the fork's leaf, and every copy's id, are known before the
rows exist. Same contract as ``store.py``: each function takes an open connection; the caller
checked the conversation is the user's.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    String,
    and_,
    case,
    column,
    func,
    insert,
    literal,
    literal_column,
    null,
    select,
    table,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.engine import reuse_key_check_plans
from ..db.ids import id_block
from .tree_store import _ALL, _path_cte, path_rows

C = t.conversations.c
M = t.messages.c


@dataclass(frozen=True)
class ForkPlan:
    """A pending copy (``conversations.fork_plan``): the path from ``start`` up to position
    ``cut`` (the lowest the limit allows), ``count`` messages whose positions start at
    ``lowest``; the copy of position p takes id ``head`` + 8 hex digits of ``low + p - cut``."""

    start: str
    top: int
    cut: int
    head: str
    low: int
    lowest: int
    count: int
    newest: int | None

    def copy_id(self, pos: int) -> str:
        return f"{self.head}{self.low + pos - self.cut:08x}"

    @property
    def leaf(self) -> str:
        return self.copy_id(self.top)

    def dumps(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def loads(cls, raw: str) -> ForkPlan:
        return cls(**json.loads(raw))


async def plan_copy(
    c: AsyncConnection, conv_id: str, start: str, limit: int
) -> tuple[ForkPlan | None, int]:
    """(the plan of copying the path up from ``start`` — the messages at the ``limit`` positions
    above and at ``start``'s —, how many of them are still streaming: the caller refuses those);
    (None, 0) when ``start`` is not a message of the conversation or ``limit`` ≤ 0.

    One narrow walk (id, parent, position, status, time): one primary-key lookup per message, no
    row copied."""
    row = (
        await c.execute(select(M.depth).where(M.id == start, M.conversation_id == conv_id))
    ).first()
    if row is None or limit <= 0:
        return None, 0
    top = int(row.depth)
    cut = max(0, top + 1 - limit)
    cols = ("id", "parent_id", "depth", "status", "created_at")
    path = _path_cte(conv_id, start, None, cols, floor=cut)
    streaming = func.count().filter(path.c.status == "streaming")
    q = select(func.count(), func.min(path.c.depth), func.max(path.c.created_at), streaming).where(
        path.c.depth >= cut
    )
    count, lowest, newest, busy = (await c.execute(q)).one()
    head, low = id_block("msg", top + 1 - cut)
    plan = ForkPlan(start, top, cut, head, low, int(lowest), int(count), newest)
    return plan, int(busy)


async def mark_pending(c: AsyncConnection, cid: str, source_id: str, plan: ForkPlan) -> None:
    """Give the new conversation ``cid`` what it will hold once copied (counters, leaf) and the
    plan of its copy."""
    await c.execute(
        update(t.conversations)
        .where(C.id == cid)
        .values(
            message_count=plan.count,
            last_message_at=plan.newest,
            active_leaf_id=plan.leaf,
            fork_source_id=source_id,
            fork_plan=plan.dumps(),
            updated_at=now_ms(),
        )
    )


async def pending_fork(c: AsyncConnection, cid: str, *, lock: bool):
    """The conversation's row (id, user, agent, source, plan), locked on PostgreSQL with ``lock``
    (a copier waits for the one copying), or None when it is gone."""
    cols = (C.id, C.user_id, C.agent_id, C.fork_source_id, C.fork_plan)
    q = select(*cols).where(C.id == cid)
    if lock and c.dialect.name == "postgresql":
        q = q.with_for_update()
    return (await c.execute(q)).first()


async def pending_forks_of(c: AsyncConnection, source_id: str) -> list[str]:
    """The pending forks of a conversation (through the partial index: nearly always none)."""
    q = select(C.id).where(C.fork_source_id == source_id).order_by(C.id)
    return [r.id for r in (await c.execute(q)).all()]


async def pending_forks_touching_user(c: AsyncConnection, user_id: str) -> list[str]:
    """The pending forks the user owns or whose source the user owns (partial index, then the
    few rows it holds)."""
    src = t.conversations.alias("src")
    q = (
        select(C.id)
        .join(src, src.c.id == C.fork_source_id)
        .where(C.fork_source_id.is_not(None), (C.user_id == user_id) | (src.c.user_id == user_id))
        .order_by(C.id)
    )
    return [r.id for r in (await c.execute(q)).all()]


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


#: the source columns a copy reads: its own (less those ``_FORK_SET`` sets) and its jump pointer
_COPY_READ = (*(k for k in _ALL if k not in _FORK_SET), "jump_id", "jump_depth")


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


def _copies(c: AsyncConnection, conv_id: str, plan: ForkPlan, new_conv, user_id, cols):
    """The SELECT of ``copy_planned``'s INSERT: the path's rows at positions ≥ ``cut`` as their
    copies (ids from the plan's block, parents and jump pointers mapped into it), root first."""
    head, low, cut = plan.head, plan.low, plan.cut
    path = _path_cte(conv_id, plan.start, None, ("id", "parent_id", "depth"), floor=cut)
    m = t.messages.alias("src")
    up = func.lead(path.c.depth).over(order_by=path.c.n)  # the parent's position
    lowest = func.min(path.c.depth).over()  # the lowest copied position: the copy's root is at 0
    # the windows run over the walk's narrow rows; the wide source rows are joined after
    narrow = select(
        path.c.id, path.c.depth.label("pos"), up.label("up"), lowest.label("lowest")
    ).where(path.c.depth >= cut)
    pg = c.dialect.name == "postgresql"
    if pg:  # sorted narrow: PostgreSQL then joins in that order and never sorts the wide rows
        narrow = narrow.order_by(path.c.depth)
    walk = narrow.subquery("walk")
    w = walk.c
    tsv: list[Any] = [literal_column("src.search_tsv").label("search_tsv")] if pg else []
    rows = (
        select(w.pos, w.up, w.lowest, *(m.c[k] for k in _COPY_READ), *tsv)
        .join_from(walk, m, m.c.id == w.id)
        .subquery("rows")
    )
    r = rows.c
    # the copies' jump pointers: the copy of the source's jump when it lies in the copied span
    jumps = and_(r.jump_id.is_not(None), r.jump_depth >= r.lowest, r.jump_depth < r.pos)
    return select(
        _block_id(c, head, low, r.pos - cut),
        literal(new_conv.id),
        case((r.up.is_(None), None), else_=_block_id(c, head, low, r.up - cut)),
        r.pos - r.lowest,
        literal(user_id),
        literal(new_conv.agent_id),
        case((jumps, _block_id(c, head, low, r.jump_depth - cut)), else_=None),
        case((jumps, r.jump_depth - r.lowest), else_=None),
        *(r[k] for k in cols),
        *([_copied_tsv(r.search_tsv, new_conv, user_id)] if pg else []),
    ).order_by(r.pos)  # root first: the new ids, parents and times ascend (see copy_planned)


def _copied_tsv(source, new_conv, user_id: str):
    """A copy's ``search_tsv`` (PostgreSQL): its source's less the entries without positions,
    plus the copy's scope — exactly what ``chatmem_search_tsv`` computes for the copy, with no
    text parsed (migration 0021 says why it is exact). NULL stays NULL: the insert trigger then
    computes the value (NULL again: an empty or streaming source)."""
    scope = func.chatmem_search_scope(
        literal(user_id), literal(new_conv.id), literal(new_conv.agent_id, String)
    )
    return func.ts_filter(source, literal_column("'{a,b,c,d}'")).op("||")(scope)


async def copy_planned(c: AsyncConnection, conv_id: str, plan: ForkPlan, new_conv) -> None:
    """Copy the planned path of ``conv_id`` into ``new_conv`` as a chain, and clear its plan.

    ONE walk of the path, inside ONE ``INSERT … SELECT``: the rows never travel through Python (a
    fork of 10,000 messages used to decode and re-encode every row). Each copy keeps its
    source's position less the lowest copied one (``MIN`` over the walk), so the copy's root is
    at 0: a path no round deletion touched is copied with exact depths, one that skips keeps its
    gaps. The copy of the message at p takes the plan's (p - cut)-th id, its parent the id of the
    next message up's position (``LEAD`` over the walk), each copy's jump pointer the copy of its
    source's.

    The copies are inserted root first (``ORDER BY`` position): on SQLite each copy's parent is
    then in place when its foreign key is checked (leaf first, a child counted a violation that
    its parent's insert cleared by searching for its children) and the new keys ascend like the
    keys of every index they enter (10,000 copies: 172 -> 146 ms). PostgreSQL checks the keys
    after the statement: no measurable change there; it sorts the narrow walk instead of the
    joined rows (no spill to disk) and copies each source's ``search_tsv`` with the scope
    swapped (``_copied_tsv``) instead of parsing its text again (docs/data-model.md, "Forks").

    The counters and the leaf were written with the plan (``mark_pending``) and hold: nothing
    changes the path or the fork while it is pending (``forks.py``)."""
    user_id = new_conv.user_id
    cols = [k for k in _ALL if k not in _FORK_SET]
    sel = _copies(c, conv_id, plan, new_conv, user_id, cols)
    names = [*_FORK_SET, *cols, *(["search_tsv"] if c.dialect.name == "postgresql" else [])]
    # a lightweight table: ``search_tsv`` is PostgreSQL's and not in the schema module
    stmt = insert(table("messages", *(column(k) for k in names))).from_select(names, sel)
    # the copies' 4 foreign keys each: 40,000 checks in 120 ms instead of 370 (PostgreSQL); the
    # INSERT's own plan is primary-key lookups whatever its parameters
    async with reuse_key_check_plans(c):
        await c.execute(stmt)  # (no rowcount: on SQLite the statement starts with its WITH)
    await c.execute(
        update(t.conversations)
        .where(C.id == new_conv.id)
        .values(fork_source_id=None, fork_plan=null())
    )


async def copy_rows(c: AsyncConnection, conv, plan: ForkPlan, limit: int) -> list[dict]:
    """The newest ``limit`` messages of a pending fork's path, oldest first, as the copy will
    store them (``copy_planned``'s mapping, applied to the source's rows): one walk of at most
    ``limit`` + 1 messages (the one above the page gives the oldest copy its parent)."""
    n = min(limit, plan.count)
    if n <= 0:
        return []
    rows = await path_rows(c, conv.fork_source_id, plan.start, n + 1 if n < plan.count else n)
    above = rows.pop(0) if len(rows) > n else None
    out: list[dict] = []
    for r in rows:
        m = dict(r._mapping)
        pos, jump = int(m["depth"]), m["jump_depth"]
        parent = out[-1] if out else None
        if parent is not None:
            m["parent_id"] = parent["id"]
        elif above is not None:
            m["parent_id"] = plan.copy_id(int(above.depth))
        else:
            m["parent_id"] = None
        jumps = m["jump_id"] is not None and plan.lowest <= jump < pos
        m.update(
            id=plan.copy_id(pos),
            conversation_id=conv.id,
            depth=pos - plan.lowest,
            user_id=conv.user_id,
            agent_id=conv.agent_id,
            jump_id=plan.copy_id(jump) if jumps else None,
            jump_depth=jump - plan.lowest if jumps else None,
        )
        out.append(m)
    return out

"""SQL for conversations and messages. Every function takes an open connection and the owner's id.

Reads of the active path walk parent links with a recursive CTE bounded by the page size, so a
page costs the same at depth 10 and at depth 10,000; counters change by relative updates in the
same transaction as the rows they count.
"""

from __future__ import annotations

from sqlalchemy import and_, delete, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.ids import new_id
from ..errors import NotFound, Unprocessable
from . import blocks as blk
from . import dag

C = t.conversations.c
M = t.messages.c


async def get_conversation(c: AsyncConnection, user_id: str, cid: str, *, for_update: bool = False):
    q = select(t.conversations).where(C.id == cid, C.user_id == user_id)
    if for_update and c.dialect.name == "postgresql":
        q = q.with_for_update()
    row = (await c.execute(q)).first()
    if row is None:
        raise NotFound("conversation not found")
    return row


async def get_message(c: AsyncConnection, conv_id: str, mid: str):
    row = (await c.execute(select(t.messages).where(M.id == mid, M.conversation_id == conv_id))).first()
    if row is None:
        raise NotFound("message not found")
    return row


async def insert_conversation(c: AsyncConnection, user_id: str, **values) -> str:
    now = values.pop("now", None) or now_ms()
    cid = new_id("c")
    await c.execute(insert(t.conversations).values(id=cid, user_id=user_id, created_at=now,
                                                   updated_at=now, **values))
    return cid


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
    **extra,
):
    """Append one message under ``parent_id`` (validated to be in the conversation)."""
    now = now or now_ms()
    depth = 0
    if parent_id is not None:
        prow = (await c.execute(select(M.conversation_id, M.depth).where(M.id == parent_id))).first()
        if prow is None or prow.conversation_id != conv.id:
            raise Unprocessable("parent message not found in this conversation",
                                code="invalid_parent", details={"parent_id": parent_id})
        depth = prow.depth + 1
    mid = extra.pop("id", None) or new_id("msg")
    await c.execute(insert(t.messages).values(
        id=mid, conversation_id=conv.id, parent_id=parent_id, role=role, blocks=blocks,
        search_text=blk.visible_text(blocks), status=status, created_at=now, user_id=user_id,
        agent_id=conv.agent_id, depth=depth, **extra))
    values = {"message_count": C.message_count + 1, "last_message_at": now, "updated_at": now}
    if move_leaf:
        values["active_leaf_id"] = mid
    await c.execute(update(t.conversations).where(C.id == conv.id).values(**values))
    return (await c.execute(select(t.messages).where(M.id == mid))).one()


_PATH_SQL = text(
    """
    WITH RECURSIVE path(id, parent_id, n) AS (
        SELECT id, parent_id, 1 FROM messages WHERE id = :start AND conversation_id = :cid
        UNION ALL
        SELECT m.id, m.parent_id, path.n + 1
        FROM messages m JOIN path ON m.id = path.parent_id
        WHERE path.n < :lim
    )
    SELECT id, n FROM path
    """
)


async def path_ids(c: AsyncConnection, conv_id: str, start: str | None, limit: int) -> list[str]:
    """Ids on the path from ``start`` up towards the root, at most ``limit``, oldest first."""
    if start is None or limit <= 0:
        return []
    rows = (await c.execute(_PATH_SQL, {"start": start, "cid": conv_id, "lim": limit})).all()
    rows.sort(key=lambda r: r.n, reverse=True)
    return [r.id for r in rows]


async def rows_by_ids(c: AsyncConnection, ids: list[str]) -> list:
    if not ids:
        return []
    rows = (await c.execute(select(t.messages).where(M.id.in_(ids)))).all()
    order = {mid: i for i, mid in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r.id])


async def branch_info_for(c: AsyncConnection, conv_id: str, rows: list) -> dict[str, dict]:
    """Sibling lists for the given messages, with one query over their parents' children."""
    if not rows:
        return {}
    parents = {r.parent_id for r in rows}
    conds = []
    real = [p for p in parents if p is not None]
    if real:
        conds.append(M.parent_id.in_(real))
    if None in parents:
        conds.append(M.parent_id.is_(None))
    q = (select(M.id, M.parent_id).where(M.conversation_id == conv_id, or_(*conds))
         .order_by(M.created_at, M.id))
    children: dict[str | None, list[str]] = {}
    for r in (await c.execute(q)).all():
        children.setdefault(r.parent_id, []).append(r.id)
    return dag.branch_info([r.id for r in rows], {r.id: r.parent_id for r in rows}, children)


async def all_messages(c: AsyncConnection, conv_id: str) -> list:
    q = select(t.messages).where(M.conversation_id == conv_id).order_by(M.created_at, M.id)
    return (await c.execute(q)).all()


_NEWEST_DESC_SQL = text(
    """
    WITH RECURSIVE sub(id) AS (
        SELECT id FROM messages WHERE id = :start AND conversation_id = :cid
        UNION ALL
        SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id
    )
    SELECT messages.id FROM messages JOIN sub ON messages.id = sub.id
    ORDER BY messages.created_at DESC, messages.id DESC LIMIT 1
    """
)


async def newest_descendant(c: AsyncConnection, conv_id: str, start: str) -> str | None:
    """The most recently written message in ``start``'s subtree (always a leaf: children are newer)."""
    return (await c.execute(_NEWEST_DESC_SQL, {"start": start, "cid": conv_id})).scalar()


async def newest_message(c: AsyncConnection, conv_id: str) -> str | None:
    q = (select(M.id).where(M.conversation_id == conv_id)
         .order_by(M.created_at.desc(), M.id.desc()).limit(1))
    return (await c.execute(q)).scalar()


async def set_leaf(c: AsyncConnection, conv_id: str, leaf: str | None, *, touch: bool = True) -> None:
    values: dict = {"active_leaf_id": leaf}
    if touch:
        values["updated_at"] = now_ms()
    await c.execute(update(t.conversations).where(C.id == conv_id).values(**values))


async def update_content(c: AsyncConnection, mid: str, blocks: list[dict]) -> None:
    await c.execute(update(t.messages).where(M.id == mid)
                    .values(blocks=blocks, search_text=blk.visible_text(blocks)))


def _nodes(rows) -> list[dag.Node]:
    return [dag.Node(r.id, r.parent_id, r.role, r.status) for r in rows]


async def children_nodes(c: AsyncConnection, conv_id: str, parent_ids: list[str]) -> dict[str, list[dag.Node]]:
    if not parent_ids:
        return {}
    q = (select(M.id, M.parent_id, M.role, M.status)
         .where(M.conversation_id == conv_id, M.parent_id.in_(parent_ids))
         .order_by(M.created_at, M.id))
    out: dict[str, list[dag.Node]] = {}
    for n in _nodes((await c.execute(q)).all()):
        out.setdefault(n.parent_id, []).append(n)
    return out


_SHIFT_SQL = text(
    """
    WITH RECURSIVE sub(id) AS (
        SELECT id FROM messages WHERE id = :start
        UNION ALL
        SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id
    )
    UPDATE messages SET depth = depth - :shift WHERE id IN (SELECT id FROM sub)
    """
)


async def apply_round_delete(c: AsyncConnection, conv_id: str, plan: dag.RoundPlan) -> int:
    """Move surviving children to the round's parent, fix their depths, delete the round."""
    for child, new_parent in plan.reparent.items():
        await c.execute(update(t.messages).where(M.id == child).values(parent_id=new_parent))
        await c.execute(_SHIFT_SQL, {"start": child, "shift": plan.depth_shift[child]})
    res = await c.execute(delete(t.messages).where(M.conversation_id == conv_id,
                                                   M.id.in_(list(plan.delete_ids))))
    n = res.rowcount
    await c.execute(update(t.conversations).where(C.id == conv_id).values(
        message_count=C.message_count - n, updated_at=now_ms()))
    return n


def list_query(user_id: str, *, archived: bool | None, starred: bool | None,
               project_id: str | None, agent_id: str | None, cursor: tuple | None, limit: int):
    q = select(t.conversations).where(C.user_id == user_id, C.inline_source_conv == "",
                                      C.workspace_id == "")
    q = q.where(C.archived == (1 if archived else 0))
    if starred is not None:
        q = q.where(C.starred == (1 if starred else 0))
    if project_id is not None:
        q = q.where(C.project_id == project_id)
    if agent_id is not None:
        q = q.where(C.agent_id == agent_id)
    if cursor is not None:
        pinned, updated, cid = cursor
        q = q.where(or_(
            C.pinned < pinned,
            and_(C.pinned == pinned, C.updated_at < updated),
            and_(C.pinned == pinned, C.updated_at == updated, C.id < cid),
        ))
    return q.order_by(C.pinned.desc(), C.updated_at.desc(), C.id.desc()).limit(limit + 1)


async def copy_path(c: AsyncConnection, src_rows: list, new_conv, user_id: str) -> str | None:
    """Insert copies of ``src_rows`` (a path, oldest first) as a chain in ``new_conv``."""
    parent = None
    now = now_ms()
    values = []
    skip = {"id", "conversation_id", "parent_id", "depth", "created_at"}
    for depth, r in enumerate(src_rows):
        mid = new_id("msg")
        row = {k: v for k, v in r._mapping.items() if k not in skip}
        row.update(id=mid, conversation_id=new_conv.id, parent_id=parent, depth=depth,
                   created_at=r.created_at, user_id=user_id, agent_id=new_conv.agent_id)
        values.append(row)
        parent = mid
    if values:
        await c.execute(insert(t.messages), values)
        await c.execute(update(t.conversations).where(C.id == new_conv.id).values(
            message_count=len(values), last_message_at=values[-1]["created_at"],
            active_leaf_id=parent, updated_at=now))
    return parent



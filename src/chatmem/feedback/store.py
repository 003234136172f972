"""SQL for ratings and problem reports. Functions take an open connection; ownership checks live
in the services (through the conversation store), so every read here is already scoped."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.ids import new_id
from ..workspaces.store import visible

F = t.message_feedback.c
R = t.user_feedback.c
M = t.messages.c
U = t.users.c


async def rating_of(c: AsyncConnection, user_id: str, mid: str):
    q = select(t.message_feedback).where(F.message_id == mid, F.user_id == user_id)
    return (await c.execute(q)).first()


async def upsert_rating(
    c: AsyncConnection,
    user_id: str,
    conv,
    msg,
    *,
    rating: str,
    reasons: Sequence[str],
    comment: str,
):
    """One row per (message, user) — the same conflict target the /rpc route uses."""
    now = now_ms()
    dialect = postgresql if c.dialect.name == "postgresql" else sqlite
    ins = dialect.insert(t.message_feedback).values(
        id=new_id("mfb"),
        message_id=msg.id,
        conversation_id=msg.conversation_id,
        user_id=user_id,
        workspace_id=conv.workspace_id or "",
        model_id=msg.model_id,
        rating=rating,
        reasons=reasons,
        comment=comment,
        created_at=now,
        updated_at=now,
    )
    await c.execute(
        ins.on_conflict_do_update(
            index_elements=["message_id", "user_id"],
            set_={
                "rating": rating,
                "reasons": reasons,
                "comment": comment,
                "updated_at": now,
                "workspace_id": conv.workspace_id or "",
                "model_id": msg.model_id,
            },
        )
    )
    await _mirror(c, msg.id, rating)
    return await rating_of(c, user_id, msg.id)


async def delete_rating(c: AsyncConnection, user_id: str, mid: str) -> None:
    await c.execute(delete(t.message_feedback).where(F.message_id == mid, F.user_id == user_id))
    await _mirror(c, mid, "")


async def _mirror(c: AsyncConnection, mid: str, rating: str) -> None:
    """Keep seed 001's (docs/specs.md) legacy ``messages.feedback`` mirror in step (the /rpc route does too), so
    message objects show the owner's current rating."""
    await c.execute(update(t.messages).where(M.id == mid).values(feedback=rating))


async def lock_user(c: AsyncConnection, user_id: str) -> None:
    """Serialise one user's report submissions on PostgreSQL (SQLite writers are serial)."""
    if c.dialect.name == "postgresql":
        await c.execute(select(U.id).where(U.id == user_id).with_for_update())


async def reports_since(c: AsyncConnection, user_id: str, since: int) -> list[int]:
    q = (
        select(R.created_at)
        .where(R.user_id == user_id, R.created_at > since)
        .order_by(R.created_at)
    )
    return list((await c.execute(q)).scalars())


async def insert_report(c: AsyncConnection, **values):
    rid = new_id("uf")
    await c.execute(t.user_feedback.insert().values(id=rid, created_at=now_ms(), **values))
    return await report(c, rid)


LIST_COLS = [col for col in t.user_feedback.c if col.name != "screenshot"]


async def report(c: AsyncConnection, rid: str):
    q = (
        select(
            *LIST_COLS,
            R.screenshot.is_not(None).label("has_screenshot"),
            U.email.label("user_email"),
        )
        .select_from(t.user_feedback.join(t.users, U.id == R.user_id))
        .where(R.id == rid)
    )
    return (await c.execute(q)).first()


async def list_reports(c: AsyncConnection, cursor: tuple[int, str] | None, limit: int) -> list:
    """Newest first without the screenshot bytes; ``limit + 1`` rows to detect a next page."""
    q = select(
        *LIST_COLS, R.screenshot.is_not(None).label("has_screenshot"), U.email.label("user_email")
    ).select_from(t.user_feedback.join(t.users, U.id == R.user_id))
    if cursor is not None:
        at, rid = cursor
        q = q.where(or_(R.created_at < at, and_(R.created_at == at, R.id < rid)))
    q = q.order_by(R.created_at.desc(), R.id.desc()).limit(limit + 1)
    return list((await c.execute(q)).all())


async def screenshot(c: AsyncConnection, rid: str):
    q = select(R.screenshot, R.screenshot_mime).where(R.id == rid)
    return (await c.execute(q)).first()


async def owned_message_conversation(c: AsyncConnection, user_id: str, mid: str) -> str | None:
    """The conversation of message ``mid`` when the caller owns it, else None."""
    C = t.conversations.c
    q = (
        select(M.conversation_id)
        .select_from(t.messages.join(t.conversations, C.id == M.conversation_id))
        .where(M.id == mid, visible(C, user_id))
    )
    return (await c.execute(q)).scalar()


async def workspace_ratings(
    c: AsyncConnection, wid: str, cursor: tuple[int, str] | None, limit: int
) -> list:
    """The ratings given in a workspace's conversations, newest first (``limit + 1`` rows)."""
    q = select(t.message_feedback, U.email.label("user_email")).join(t.users, U.id == F.user_id)
    q = q.where(F.workspace_id == wid)
    if cursor is not None:
        at, fid = cursor
        q = q.where(or_(F.updated_at < at, and_(F.updated_at == at, F.id < fid)))
    q = q.order_by(F.updated_at.desc(), F.id.desc()).limit(limit + 1)
    return list((await c.execute(q)).all())

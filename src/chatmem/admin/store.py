"""The admin console's cross-domain reads: answers' usage and cost per day, user and model, and
the ratings given per model (each statement scoped to a time window and bounded)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t

M = t.messages.c
F = t.message_feedback.c
U = t.users.c
DAY_MS = 86_400_000


async def usage_rows(c: AsyncConnection, since: int, limit: int) -> list:
    day = (M.created_at // DAY_MS).label("day")
    q = (
        select(
            day,
            M.user_id,
            U.email,
            M.model_id,
            func.count().label("answers"),
            func.coalesce(func.sum(M.input_tokens), 0).label("input_tokens"),
            func.coalesce(func.sum(M.output_tokens), 0).label("output_tokens"),
            func.coalesce(func.sum(M.cost), 0.0).label("cost"),
        )
        .join(t.users, U.id == M.user_id)
        .where(M.role == "assistant", M.created_at >= since)
        .group_by(day, M.user_id, U.email, M.model_id)
        .order_by(day, U.email, M.model_id)
        .limit(limit)
    )
    return list((await c.execute(q)).all())


async def ratings_since(c: AsyncConnection, since: int, limit: int) -> list:
    q = (
        select(F.model_id, F.rating, F.reasons, F.comment, F.updated_at, U.email)
        .join(t.users, U.id == F.user_id)
        .where(F.updated_at >= since)
        .order_by(F.updated_at.desc(), F.id.desc())
        .limit(limit)
    )
    return list((await c.execute(q)).all())

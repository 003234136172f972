"""The compaction lease: at most one process summarises a conversation at a time (seed 001, docs/specs.md).

A row in ``conversation_compaction_leases`` (conversation_id, owner_token, expires_at in ms) is the
lock. Acquire = delete this conversation's *expired* row and insert-on-conflict-do-nothing, in one
transaction: whoever inserts owns the lease until it expires. Release deletes the row only when the
owner token matches, so a process whose lease expired and was taken over can never free the new
owner's lease. No Redis, any number of replicas.
"""

from __future__ import annotations

import secrets

from sqlalchemy import and_, delete, select

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert
from ..db.engine import Database

L = t.conversation_compaction_leases.c


async def acquire(db: Database, conversation_id: str, ttl_ms: int) -> str | None:
    """A fresh owner token when the lease was free (or expired), else None."""
    token = secrets.token_hex(16)
    async with db.write() as c:
        now = now_ms()
        await c.execute(
            delete(t.conversation_compaction_leases).where(
                and_(L.conversation_id == conversation_id, L.expires_at < now)
            )
        )
        stmt = (
            insert(c, t.conversation_compaction_leases)
            .values(conversation_id=conversation_id, owner_token=token, expires_at=now + ttl_ms)
            .on_conflict_do_nothing(index_elements=["conversation_id"])
        )
        res = await c.execute(stmt)
        if res.rowcount == 1:
            return token
        owner = (
            await c.execute(select(L.owner_token).where(L.conversation_id == conversation_id))
        ).scalar()
        return token if owner == token else None


async def release(db: Database, conversation_id: str, token: str) -> bool:
    """Free the lease if ``token`` still owns it; True when a row was deleted."""
    async with db.write() as c:
        res = await c.execute(
            delete(t.conversation_compaction_leases).where(
                and_(L.conversation_id == conversation_id, L.owner_token == token)
            )
        )
        return res.rowcount == 1


async def holder(db: Database, conversation_id: str) -> dict | None:
    async with db.read() as c:
        row = (
            await c.execute(
                select(t.conversation_compaction_leases).where(L.conversation_id == conversation_id)
            )
        ).first()
    return dict(row._mapping) if row else None

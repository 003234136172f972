"""Deployment-wide duties done by one process at a time: a named lease in the database.

Why it exists: every server and worker process runs the same background services, and most of
their work must run everywhere (each sweeps for dead turns, each claims jobs), but some is a
chore for the deployment as a whole — pruning old event logs, deleting old finished jobs. Done by
every process, it is the same delete racing itself N times. ``hold`` takes or renews the lease
named for the duty: it succeeds for the current holder and, once the lease has expired (its
process died or stopped), for anyone — one statement, atomic on both databases
(``INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING``). ``release`` hands it over at once on a
clean shutdown.
"""

from __future__ import annotations

import os
import socket
import uuid

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from . import schema as t
from .clock import now_ms
from .dialect import insert

S = t.service_leases.c


def new_holder_id() -> str:
    """Who holds a lease: ``host:pid:random`` (unique per process, readable in the table)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def hold(c: AsyncConnection, name: str, holder: str, ttl_ms: int) -> bool:
    """Take or renew the lease ``name`` for ``ttl_ms``; False while someone else holds it."""
    now = now_ms()
    ins = insert(c, t.service_leases).values(name=name, holder=holder, expires_at=now + ttl_ms)
    stmt = ins.on_conflict_do_update(
        index_elements=[S.name],
        set_={"holder": ins.excluded.holder, "expires_at": ins.excluded.expires_at},
        where=(S.holder == ins.excluded.holder) | (S.expires_at <= now),
    ).returning(S.holder)
    return (await c.execute(stmt)).scalar() == holder


async def release(c: AsyncConnection, name: str, holder: str) -> None:
    await c.execute(delete(t.service_leases).where(S.name == name, S.holder == holder))


async def holder_of(c: AsyncConnection, name: str) -> str | None:
    """The live holder of ``name`` (None when free or expired)."""
    q = select(S.holder).where(S.name == name, S.expires_at > now_ms())
    return (await c.execute(q)).scalar()

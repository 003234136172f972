"""Generation leases: one row per running turn, keyed (conversation, branch_key, principal).

``branch_key`` is the id of the message the new one is written under (``root`` for the first), so a
double submit on one branch collides while other users, other branches and regenerations proceed.
The owner token is ``<assistant message id>:<secret>``: the sweeper can tell which message a lease
protects, and only the owner can renew or release it. A stop asked on another replica is
recorded by suffixing the token with ``!stop``; the owner sees it and stops.

Timing (``Timing.of``) is derived from one promise, ``lease_ttl_s``: a turn whose process died is
ended (error / ``generation_interrupted``) within ``lease_ttl_s`` of its death. A lease is held
for half the TTL and renewed every sixth of it (three renewals may be late before it expires);
the sweeper looks every quarter TTL. Died just after a renewal: the lease expires half a TTL
later and the next sweep, at most a quarter later, ends the row — three quarters of the TTL, a
quarter left for a slow sweep on a loaded machine.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlalchemy import Integer, and_, bindparam, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import hot
from ..db import schema as t

L = t.conversation_generation_leases.c
STOP = "!stop"


@dataclass(frozen=True)
class Timing:
    hold_ms: int  # a lease taken or renewed now expires this much later
    renew_s: float  # the heartbeat renews this often
    sweep_s: float  # the sweeper runs this often

    @classmethod
    def of(cls, settings) -> Timing:
        ttl = float(settings.lease_ttl_s)
        sweep = ttl / 4
        if settings.sweep_interval_s:  # an explicit cadence may only be faster
            sweep = min(sweep, settings.sweep_interval_s)
        return cls(hold_ms=int(ttl * 500), renew_s=ttl / 6, sweep_s=sweep)


def message_of(token: str) -> str:
    return token.split(":", 1)[0]


def _of_message(message_id: str):
    return L.owner_token.startswith(message_id + ":", autoescape=True)


#: ``acquire``'s answer when the principal already holds ``cap`` live leases
AT_CAP = "!cap"

_COLUMNS = ("conversation_id", "branch_key", "principal_id", "owner_token", "expires_at")


@functools.cache
def _acquire_statement(dialect: str, capped: bool):
    """``acquire``'s INSERT, built once per (dialect, capped): parameters are the row's columns,
    ``now`` and (capped) ``cap``. Building it per call cost ~1 ms of CPU."""
    table = t.conversation_generation_leases
    ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    if capped:
        principal = bindparam("principal_id", type_=table.c.principal_id.type)
        under = _live(principal, _NOW).scalar_subquery() < _CAP
        return _taking(ins.from_select(list(_COLUMNS), _row().where(under)))
    return _taking(ins.values(dict(zip(_COLUMNS, _params(), strict=True))))


def _params() -> list:
    return [bindparam(k, type_=L[k].type) for k in _COLUMNS]


def _row():
    """The lease's row as a SELECT of its parameters (an INSERT … SELECT's source)."""
    return select(*(p.label(k) for p, k in zip(_params(), _COLUMNS, strict=True)))


def _taking(ins):
    """``ins`` taking over an expired lease on its key, answering the new token (no row: a live
    holder kept it, or the source had no row)."""
    return ins.on_conflict_do_update(
        index_elements=[L.conversation_id, L.branch_key, L.principal_id],
        set_={"owner_token": ins.excluded.owner_token, "expires_at": ins.excluded.expires_at},
        where=L.expires_at <= _NOW,
    ).returning(L.owner_token)


_NOW = bindparam("now", type_=L.expires_at.type)
_CAP = bindparam("cap", type_=Integer)


async def acquire(
    c: AsyncConnection,
    conv_id: str,
    branch_key: str,
    principal_id: str,
    token: str,
    ttl_ms: int,
    now: int,
    *,
    cap: int | None = None,
) -> str | None:
    """Take the lease; None on success, else the live holder's token, or ``AT_CAP`` when the
    principal already holds ``cap`` live leases (checked first, as a separate check was).

    One statement when it is free or expired and under the cap: an INSERT … SELECT whose row
    exists only while the principal's live leases number fewer than ``cap``, that takes over an
    expired lease on its key (``DO UPDATE … WHERE expires_at <= now``) and returns the new token.
    Only a refusal costs more reads (which cap, or which token holds it)."""
    stmt = _acquire_statement(c.dialect.name, cap is not None)
    params = acquire_params(conv_id, branch_key, principal_id, token, ttl_ms, now, cap=cap)
    for _ in range(3):  # the holder may be released between the two (PostgreSQL): try again
        if (await hot.execute(c, stmt, params)).scalar() == token:
            return None
        if cap is not None and await live_count(c, principal_id, now) >= cap:
            return AT_CAP
        key = and_(
            L.conversation_id == conv_id, L.branch_key == branch_key, L.principal_id == principal_id
        )
        holder = (await c.execute(select(L.owner_token).where(key))).scalar()
        if holder is not None:
            return holder
    return None


def acquire_params(
    conv_id: str,
    branch_key: str,
    principal_id: str,
    token: str,
    ttl_ms: int,
    now: int,
    *,
    cap: int | None = None,
) -> dict:
    """The parameters of ``acquire``'s INSERT (``acquiring``)."""
    params = {
        "conversation_id": conv_id,
        "branch_key": branch_key,
        "principal_id": principal_id,
        "owner_token": token,
        "expires_at": now + ttl_ms,
        "now": now,
    }
    if cap is not None:
        params["cap"] = cap
    return params


def acquiring(capped: bool):
    """PostgreSQL: ``acquire``'s INSERT (``acquire_params``), to run inside a caller's statement
    as a data-modifying CTE: its RETURNING has a row only when the lease was taken."""
    return _acquire_statement("postgresql", capped)


def acquiring_after(locked, capped: bool):
    """PostgreSQL: ``acquiring`` with one row of ``locked`` (a CTE whose ``id`` is the
    principal's row, locked: ``start_store``) as its source — no row there, no lease — and the
    cap counted by ``chatmem_live_leases`` (migration 0024) on that row: a snapshot taken after
    the lock was granted, which sees the lease of the principal's turn that held it before
    (the statement's own, taken before the wait, would not)."""
    ins = postgresql.insert(t.conversation_generation_leases)
    src = _row().select_from(locked)
    if capped:
        src = src.where(func.chatmem_live_leases(locked.c.id, _NOW) < _CAP)
    return _taking(ins.from_select(list(_COLUMNS), src))


async def live_count(c: AsyncConnection, principal_id: str, now: int) -> int:
    return (await c.execute(_live(principal_id, now))).scalar_one()


def _live(principal, now):
    """The count of ``principal``'s live leases at ``now`` (values or bound parameters; the same
    count as migration 0024's ``chatmem_live_leases``)."""
    return select(func.count()).where(L.principal_id == principal, L.expires_at > now)


async def state(c: AsyncConnection, token: str) -> str:
    """'ok', 'stop' (a stop was requested elsewhere) or 'lost' (expired and taken/swept)."""
    held = (await hot.execute(c, _HELD, {"b_tokens": _either(token)})).scalar()
    return _state_of(held)


async def renew(c: AsyncConnection, token: str, ttl_ms: int, now: int) -> str:
    """Extend the lease of ``token`` (stop-marked or not); its ``state`` as renewed, read from
    the same statement ('lost': nothing to renew)."""
    params = {"b_tokens": _either(token), "b_expires": now + ttl_ms}
    return _state_of((await hot.execute(c, _RENEW, params)).scalar())


def _either(token: str) -> list[str]:
    """The token as taken and as stop-marked (a stop asked elsewhere: ``STOP``)."""
    return [token, token + STOP]


def _state_of(held: str | None) -> str:
    if held is None:
        return "lost"
    return "stop" if held.endswith(STOP) else "ok"


async def renew_many(c: AsyncConnection, tokens: list[str], ttl_ms: int, now: int) -> None:
    """``renew`` for several leases in one statement (the flusher's turns)."""
    if tokens:
        held = [*tokens, *(tok + STOP for tok in tokens)]
        await hot.execute(c, _RENEW, {"b_tokens": held, "b_expires": now + ttl_ms})


#: ``state``'s read and ``renew``'s and ``renew_many``'s UPDATE, built once (a turn's heartbeat
#: and a flush built them per call)
_HELD_BY = L.owner_token.in_(bindparam("b_tokens", expanding=True))
_HELD = select(L.owner_token).where(_HELD_BY)
_RENEW = (
    update(t.conversation_generation_leases)
    .where(_HELD_BY)
    .values(expires_at=bindparam("b_expires"))
    .returning(L.owner_token)
)


async def release(c: AsyncConnection, token: str) -> None:
    await c.execute(
        delete(t.conversation_generation_leases).where(L.owner_token.in_(_either(token)))
    )


async def release_message(c: AsyncConnection, message_id: str) -> None:
    """Release the message's lease whoever holds its token (the sweeper, a stop: an ender that
    does not know it): a prefix match, which no index serves."""
    await hot.execute(c, delete(t.conversation_generation_leases).where(_of_message(message_id)))


async def release_own(c: AsyncConnection, conv_id: str, token: str) -> None:
    """``release_message`` for the turn that holds ``token`` (stop-marked or not): a range of
    the conversation's primary key, and a statement built once instead of per call."""
    await hot.execute(c, _release_own_statement(), own_params(conv_id, token))


def own_params(conv_id: str, token: str) -> dict:
    """The parameters of ``own_deletion`` (``release_own``; generation/store.end_streaming's
    PostgreSQL statement deletes the lease in its own ``WITH``)."""
    return {"cid": conv_id, "tok": token, "stop": token + STOP}


def own_deletion():
    """The DELETE of the lease held by a token, stop-marked or not (``own_params``)."""
    return delete(t.conversation_generation_leases).where(
        L.conversation_id == bindparam("cid"),
        L.owner_token.in_([bindparam("tok"), bindparam("stop")]),
    )


_release_own_statement = functools.cache(own_deletion)


async def live_token(c: AsyncConnection, message_id: str, now: int) -> str | None:
    q = select(L.owner_token).where(_of_message(message_id), L.expires_at > now)
    return (await c.execute(q)).scalar()


async def request_stop(c: AsyncConnection, message_id: str, now: int) -> bool:
    """Mark the message's live lease as asked to stop; False when no live lease exists."""
    token = await live_token(c, message_id, now)
    if token is None:
        return False
    if not token.endswith(STOP):
        await c.execute(
            update(t.conversation_generation_leases)
            .where(L.owner_token == token)
            .values(owner_token=token + STOP)
        )
    return True

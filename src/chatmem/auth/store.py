"""Every SQL statement of the auth domain: users, API keys, web sessions and login tokens.

Why it exists: the account use-cases (service.py) decide; this module reads and writes. Each
function takes an open connection; the service owns the transaction around it.
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.engine import after_commit
from . import cache

U = t.users.c
K = t.api_keys.c
W = t.web_sessions.c


def auth_changed(c: AsyncConnection) -> None:
    """This transaction changes what a key or session lookup answers: void the cached callers
    now and again once it commits (auth/cache.py; a lookup racing the commit is not kept)."""
    cache.changed()
    after_commit(c, cache.changed)


# ── users ───────────────────────────────────────────────────────────────────────────────────────


async def count_users(c: AsyncConnection) -> int:
    return (await c.execute(select(func.count()).select_from(t.users))).scalar_one()


async def email_taken(c: AsyncConnection, email: str) -> bool:
    return (await c.execute(select(U.id).where(U.email == email))).first() is not None


async def insert_user(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.users).values(**values))


async def user_row(c: AsyncConnection, user_id: str):
    return (await c.execute(select(t.users).where(U.id == user_id))).one()


async def list_users(c: AsyncConnection) -> list:
    return list((await c.execute(select(t.users).order_by(U.created_at))).all())


async def user_by_email_or_id(c: AsyncConnection, email_or_id: str):
    q = select(t.users).where((U.email == email_or_id.strip().lower()) | (U.id == email_or_id))
    return (await c.execute(q)).first()


async def active_user_by_email(c: AsyncConnection, email: str):
    q = select(t.users).where(U.email == email.strip().lower(), U.disabled == 0)
    return (await c.execute(q)).first()


async def update_user(c: AsyncConnection, user_id: str, **values) -> None:
    auth_changed(c)
    await c.execute(update(t.users).where(U.id == user_id).values(**values))


# ── API keys ────────────────────────────────────────────────────────────────────────────────────


async def insert_key(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.api_keys).values(**values))


async def key_id_by_hash(c: AsyncConnection, key_hash: str) -> str:
    return (await c.execute(select(K.id).where(K.key_hash == key_hash))).scalar_one()


async def list_keys(c: AsyncConnection, user_id: str) -> list:
    q = select(t.api_keys).where(K.user_id == user_id).order_by(K.created_at)
    return list((await c.execute(q)).all())


async def revoke_keys(
    c: AsyncConnection, key_id_or_prefix: str, user_id: str | None, now: int
) -> int:
    q = update(t.api_keys).where(
        (K.id == key_id_or_prefix) | (K.prefix == key_id_or_prefix), K.revoked_at.is_(None)
    )
    if user_id:
        q = q.where(K.user_id == user_id)
    auth_changed(c)
    return (await c.execute(q.values(revoked_at=now))).rowcount


async def user_for_key(c: AsyncConnection, key_hash: str):
    """The active user of a live key, with ``key_id`` and ``last_used_at``; None otherwise."""
    q = (
        select(t.users, K.id.label("key_id"), K.last_used_at)
        .join(t.api_keys, K.user_id == U.id)
        .where(K.key_hash == key_hash, K.revoked_at.is_(None), U.disabled == 0)
    )
    return (await c.execute(q)).first()


async def touch_key(c: AsyncConnection, key_id: str, now: int) -> None:
    await c.execute(update(t.api_keys).where(K.id == key_id).values(last_used_at=now))


# ── sessions and one-time login tokens ──────────────────────────────────────────────────────────


async def user_for_session(c: AsyncConnection, session_hash: str, now: int):
    """The active user of a live session (not a login token), with its ``csrf_token``."""
    q = (
        select(t.users, W.csrf_token, W.expires_at.label("session_expires_at"))
        .join(t.web_sessions, W.user_id == U.id)
        .where(W.id == session_hash, W.expires_at > now, W.csrf_token != "", U.disabled == 0)
    )
    return (await c.execute(q)).first()


async def delete_expired_sessions(c: AsyncConnection, now: int) -> None:
    await c.execute(delete(t.web_sessions).where(W.expires_at <= now))


async def insert_session(c: AsyncConnection, **values) -> None:
    await c.execute(insert(t.web_sessions).values(**values))


async def login_token_user(c: AsyncConnection, token_hash: str, now: int) -> str | None:
    """The user of a live one-time login token (a session row with no CSRF token)."""
    q = select(W.user_id).where(W.id == token_hash, W.csrf_token == "", W.expires_at > now)
    return (await c.execute(q)).scalar()


async def delete_session(c: AsyncConnection, session_hash: str) -> None:
    auth_changed(c)
    await c.execute(delete(t.web_sessions).where(W.id == session_hash))


async def end_sessions(c: AsyncConnection, user_id: str, *, keep: str | None = None) -> int:
    """End the user's web sessions (not login tokens), except the one hashed ``keep``."""
    q = delete(t.web_sessions).where(W.user_id == user_id, W.csrf_token != "")
    if keep:
        q = q.where(W.id != keep)
    auth_changed(c)
    return (await c.execute(q)).rowcount

"""Account operations: create users and keys, resolve a bearer key or a session cookie, log in/out.

The use-cases own the transactions; every statement is in store.py.
"""

from __future__ import annotations

from ..contracts.base import EMAIL_RE
from ..cpu import run_cpu
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..errors import BadRequest, Conflict, Unauthorized, found
from . import cache, store
from .models import Principal
from .secrets import (
    burn_password_check,
    digest,
    hash_password,
    new_api_key,
    new_session_token,
    verify_password,
)


def _principal(row, via: str = "key", csrf: str = "") -> Principal:
    return Principal(
        id=row.id,
        email=row.email,
        name=row.name,
        role=row.role,
        settings=dict(row.settings or {}),
        via=via,
        csrf_token=csrf,
    )


def user_public(row) -> dict:
    return {
        "id": row.id,
        "email": row.email,
        "name": row.name,
        "role": row.role,
        "settings": dict(row.settings or {}),
        "has_password": bool(row.password_hash),
        "created_at": row.created_at,
    }


async def count_users(db: Database) -> int:
    async with db.read() as c:
        return await store.count_users(c)


async def create_user(
    db: Database, email: str, name: str = "", password: str | None = None, admin: bool = False
) -> tuple[dict, str]:
    """Create a user and a first API key; returns (user, key). The key is never stored in clear."""
    email = email.strip().lower()
    if not EMAIL_RE.match(email):
        raise BadRequest(f"invalid email {email!r}")
    now = now_ms()
    uid = new_id("u")
    pw_hash = await run_cpu(hash_password, password) if password else ""
    async with db.write() as c:
        if await store.email_taken(c, email):
            raise Conflict(f"a user with email {email} already exists")
        await store.insert_user(
            c,
            id=uid,
            email=email,
            name=name or email.split("@")[0],
            password_hash=pw_hash,
            role="admin" if admin else "user",
            settings={"memory_enabled": True},
            created_at=now,
            updated_at=now,
        )
        key = await _insert_key(c, uid, "default")
        row = await store.user_row(c, uid)
    return user_public(row), key


async def _insert_key(c, user_id: str, name: str) -> str:
    key = new_api_key()
    await store.insert_key(
        c,
        id=new_id("key"),
        user_id=user_id,
        name=name,
        prefix=key[:10],
        key_hash=digest(key),
        created_at=now_ms(),
    )
    return key


async def list_users(db: Database) -> list[dict]:
    async with db.read() as c:
        rows = await store.list_users(c)
    return [user_public(r) for r in rows]


async def find_user(db: Database, email_or_id: str):
    async with db.read() as c:
        row = await store.user_by_email_or_id(c, email_or_id)
    return found(row, f"no user {email_or_id!r}")


async def create_key(db: Database, user_id: str, name: str = "") -> tuple[str, str]:
    async with db.write() as c:
        key = await _insert_key(c, user_id, name)
        kid = await store.key_id_by_hash(c, digest(key))
    return kid, key


async def list_keys(db: Database, user_id: str) -> list[dict]:
    async with db.read() as c:
        rows = await store.list_keys(c, user_id)
    return [
        {
            "id": r.id,
            "name": r.name,
            "prefix": r.prefix,
            "created_at": r.created_at,
            "last_used_at": r.last_used_at,
            "revoked_at": r.revoked_at,
        }
        for r in rows
    ]


async def revoke_key(db: Database, key_id_or_prefix: str, user_id: str | None = None) -> int:
    async with db.write() as c:
        return await store.revoke_keys(c, key_id_or_prefix, user_id, now_ms())


#: ``api_keys.last_used_at`` is refreshed at most this often (a write per request would serialise
#: every SQLite reader behind the writer for a timestamp nobody needs to the millisecond).
KEY_TOUCH_MS = 60_000


async def principal_for_key(
    db: Database, key: str, principals: cache.PrincipalCache | None = None
) -> Principal:
    """The caller of a bearer key; remembered by ``principals`` (auth/cache.py) when given."""
    hashed = digest(key)
    if principals is not None and (hit := principals.get(hashed)) is not None:
        return hit
    epoch = cache.epoch()
    async with db.read_once() as c:  # one statement: no transaction round trips
        row = await store.user_for_key(c, hashed)
    if row is None:
        raise Unauthorized("invalid or revoked API key")
    now = now_ms()
    if row.last_used_at is None or now - row.last_used_at >= KEY_TOUCH_MS:
        async with db.write_once() as c:
            await store.touch_key(c, row.key_id, now)
    p = _principal(row, "key")
    if principals is not None:
        principals.put(hashed, p, epoch=epoch)
    return p


async def principal_for_session(
    db: Database, token: str, principals: cache.PrincipalCache | None = None
) -> Principal:
    """The caller of a session cookie; remembered by ``principals`` until at most its expiry."""
    hashed = digest(token)
    if principals is not None and (hit := principals.get(hashed)) is not None:
        return hit
    epoch, now = cache.epoch(), now_ms()
    async with db.read_once() as c:
        row = await store.user_for_session(c, hashed, now)
    if row is None:
        raise Unauthorized("session expired; log in again")
    p = _principal(row, "session", row.csrf_token)
    if principals is not None:
        principals.put(hashed, p, epoch=epoch, expires_in_s=(row.session_expires_at - now) / 1000)
    return p


async def login(db: Database, email: str, password: str, ttl_s: int) -> tuple[str, str, dict]:
    """Check a password; returns (session token, csrf token, user)."""
    async with db.read() as c:
        row = await store.active_user_by_email(c, email)
    # argon2 runs on the CPU pool (cpu.py): a hash takes tens of ms and would stall the loop
    if row is None or not row.password_hash:
        await run_cpu(burn_password_check, password)  # same cost whether or not the user exists
        raise Unauthorized("wrong email or password")
    if not await run_cpu(verify_password, row.password_hash, password):
        raise Unauthorized("wrong email or password")
    async with db.write() as c:
        token, csrf = await _new_session(c, row.id, ttl_s)
    return token, csrf, user_public(row)


async def login_guarded(
    db: Database, guard, ip: str, email: str, password: str, ttl_s: int
) -> tuple[str, str, dict]:
    """``login`` behind the throttle (auth/throttle.py): refused before any hashing when the
    IP or the account is over its limit; a failure counts against the account."""
    key = email.strip().lower()
    guard.admit_login(ip, key)
    try:
        out = await login(db, email, password, ttl_s)
    except Unauthorized:
        guard.failed(key)
        raise
    guard.succeeded(key)
    return out


async def _new_session(c, user_id: str, ttl_s: int) -> tuple[str, str]:
    token, csrf = new_session_token(), new_session_token()
    now = now_ms()
    await store.delete_expired_sessions(c, now)
    await store.insert_session(
        c,
        id=digest(token),
        user_id=user_id,
        csrf_token=csrf,
        created_at=now,
        expires_at=now + ttl_s * 1000,
    )
    return token, csrf


async def create_login_token(db: Database, user_id: str, ttl_s: int) -> str:
    """A one-time login token (a web_sessions row with no CSRF token, so it is not a session)."""
    token = new_session_token()
    now = now_ms()
    async with db.write() as c:
        await store.insert_session(
            c,
            id=digest(token),
            user_id=user_id,
            csrf_token="",
            created_at=now,
            expires_at=now + ttl_s * 1000,
        )
    return token


async def redeem_login_token(db: Database, token: str, ttl_s: int) -> tuple[str, str]:
    """Exchange a one-time login token for a session (the token stops working)."""
    async with db.write() as c:
        user_id = await store.login_token_user(c, digest(token), now_ms())
        if user_id is None:
            raise Unauthorized("this login link is invalid, used or expired")
        await store.delete_session(c, digest(token))
        return await _new_session(c, user_id, ttl_s)


async def logout(db: Database, token: str) -> None:
    async with db.write() as c:
        await store.delete_session(c, digest(token))


async def update_profile(
    db: Database, p: Principal, *, name: str | None = None, settings: dict | None = None
) -> dict:
    """Change the caller's display name and/or merge keys into their settings."""
    async with db.write() as c:
        row = await store.user_row(c, p.id)
        merged = dict(row.settings or {})
        merged.update(settings or {})
        values = {"settings": merged, "updated_at": now_ms()}
        if name is not None:
            values["name"] = name
        await store.update_user(c, p.id, **values)
        row = await store.user_row(c, p.id)
    return user_public(row)


#: A new password's length bounds (the login form accepts up to 1024 characters).
PASSWORD_MIN, PASSWORD_MAX = 8, 1024


def check_new_password(password: str) -> None:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise BadRequest(
            f"a password needs {PASSWORD_MIN} to {PASSWORD_MAX} characters",
            code="weak_password",
            details={"min": PASSWORD_MIN, "max": PASSWORD_MAX},
        )


async def set_password(
    db: Database, user_id: str, password: str, *, keep_session: str | None = None
) -> int:
    """Set a user's password and end their other web sessions (a changed or reset password must
    lock out whoever held an old one). ``keep_session`` is the cookie token of the session that
    asked, which stays valid. Returns how many sessions were ended."""
    check_new_password(password)
    pw_hash = await run_cpu(hash_password, password)
    async with db.write() as c:
        await store.update_user(c, user_id, password_hash=pw_hash, updated_at=now_ms())
        keep = digest(keep_session) if keep_session else None
        return await store.end_sessions(c, user_id, keep=keep)


async def change_password(
    db: Database, p: Principal, current: str, new: str, *, session_token: str | None
) -> None:
    """The caller changes their own password. The current one must be given when there is one
    (a first-start admin who came in by a login link has none yet and sets a first one)."""
    async with db.read() as c:
        row = await store.user_row(c, p.id)
    if row.password_hash and not await run_cpu(verify_password, row.password_hash, current or ""):
        raise BadRequest("the current password is wrong", code="wrong_password")
    await set_password(db, p.id, new, keep_session=session_token)

"""The admin console's use-cases: manage users (through the auth service and store), summarise
usage and ratings (pure aggregation over admin/store.py's bounded reads), retry a failed job."""

from __future__ import annotations

from collections import Counter

from ..auth import service as auth
from ..auth import store as auth_store
from ..auth.models import Principal
from ..db.clock import now_ms
from ..db.engine import Database
from ..errors import Conflict, found
from . import store
from .wire import AdminUserIn, AdminUserPatch

#: one-time login links made by an admin (a reset) stay valid this long
LINK_TTL_S = 24 * 3600
USAGE_ROWS = 5000
RATING_ROWS = 2000
RECENT_COMMENTS = 50


def admin_user(row) -> dict:
    return {**auth.user_public(row), "disabled": bool(row.disabled)}


async def list_users(db: Database) -> dict:
    async with db.read() as c:
        rows = await auth_store.list_users(c)
    return {"items": [admin_user(r) for r in rows]}


async def _user(db: Database, uid: str):
    async with db.read() as c:
        row = await auth_store.user_by_email_or_id(c, uid)
    return found(row if row is not None and row.id == uid else None, f"no user {uid!r}")


async def create_user(db: Database, body: AdminUserIn) -> dict:
    user, _key = await auth.create_user(
        db, body.email, name=body.name.strip(), password=body.password, admin=body.admin
    )
    return admin_user(await _user(db, user["id"]))


async def patch_user(db: Database, admin: Principal, uid: str, body: AdminUserPatch) -> dict:
    """Role and disabled flag. An admin cannot demote or disable themself (409): the console
    must never lock out the last person who can undo it. Disabling ends the user's sessions."""
    await _user(db, uid)
    if uid == admin.id and (body.role == "user" or body.disabled):
        raise Conflict("you cannot demote or disable yourself", code="self_change")
    values: dict = {"updated_at": now_ms()}
    if body.role is not None:
        values["role"] = body.role
    if body.disabled is not None:
        values["disabled"] = 1 if body.disabled else 0
    async with db.write() as c:
        await auth_store.update_user(c, uid, **values)
        if body.disabled:
            await auth_store.end_sessions(c, uid)
        row = await auth_store.user_row(c, uid)
    return admin_user(row)


async def set_password(db: Database, uid: str, password: str) -> None:
    await _user(db, uid)
    await auth.set_password(db, uid, password)


async def login_link(db: Database, uid: str, base: str) -> dict:
    await _user(db, uid)
    token = await auth.create_login_token(db, uid, ttl_s=LINK_TTL_S)
    return {
        "url": f"{base.rstrip('/')}/api/auth/magic?token={token}",
        "expires_at": now_ms() + LINK_TTL_S * 1000,
    }


def _since(days: int) -> int:
    return (now_ms() // store.DAY_MS - days + 1) * store.DAY_MS


async def usage(db: Database, days: int) -> dict:
    since = _since(days)
    async with db.read() as c:
        rows = await store.usage_rows(c, since, USAGE_ROWS)
    return {
        "since": since,
        "rows": [
            {
                "day": int(r.day) * store.DAY_MS,
                "user_id": r.user_id,
                "user_email": r.email,
                "model_id": r.model_id or "",
                "answers": int(r.answers),
                "input_tokens": int(r.input_tokens),
                "output_tokens": int(r.output_tokens),
                "cost": round(float(r.cost), 8),
            }
            for r in rows
        ],
    }


def summarise_ratings(rows: list) -> tuple[list[dict], list[dict]]:
    """Per model: likes, dislikes and how often each reason was given; and the newest ratings
    that carry reasons or a comment (rows come newest first)."""
    per: dict[str, dict] = {}
    recent: list[dict] = []
    for r in rows:
        m = per.setdefault(
            r.model_id or "",
            {"model_id": r.model_id or "", "likes": 0, "dislikes": 0, "r": Counter()},
        )
        m["likes" if r.rating == "like" else "dislikes"] += 1
        m["r"].update(list(r.reasons or []))
        if (r.reasons or r.comment) and len(recent) < RECENT_COMMENTS:
            recent.append(
                {
                    "model_id": r.model_id or "",
                    "rating": r.rating,
                    "reasons": list(r.reasons or []),
                    "comment": r.comment or "",
                    "user_email": r.email,
                    "updated_at": r.updated_at,
                }
            )
    models = [
        {k: v for k, v in m.items() if k != "r"} | {"reasons": dict(m["r"].most_common())}
        for m in sorted(per.values(), key=lambda m: -(m["likes"] + m["dislikes"]))
    ]
    return models, recent


async def ratings(db: Database, days: int) -> dict:
    since = _since(days)
    async with db.read() as c:
        rows = await store.ratings_since(c, since, RATING_ROWS)
    models, recent = summarise_ratings(rows)
    return {"since": since, "models": models, "recent": recent}

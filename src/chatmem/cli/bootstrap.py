"""First start: on an empty database, create an admin and print its API key and a login link.

The login link carries a one-time token (valid 24 h) that becomes a web session when opened, so
nobody has to type the API key into a browser. The banner also says how to get back in later (a
password set in the web app's settings or by ``chatmem users set-password``, or a fresh link from
``chatmem users login-link``): the admin has no password until one is set.
"""

from __future__ import annotations

from ..auth import service
from ..config import Settings
from ..db.engine import Database

ADMIN_EMAIL = "admin@localhost"
LOGIN_LINK_TTL_S = 24 * 3600


def base_url(s: Settings) -> str:
    """Where people reach this server: ``public_url``, else the bound host and port."""
    host = "127.0.0.1" if s.host in ("0.0.0.0", "::") else s.host
    return s.public_url.rstrip("/") or f"http://{host}:{s.port}"


async def login_link(db: Database, s: Settings, user_id: str) -> str:
    token = await service.create_login_token(db, user_id, ttl_s=LOGIN_LINK_TTL_S)
    return f"{base_url(s)}/api/auth/magic?token={token}"


async def first_start(s: Settings) -> None:
    db = Database(s.database_url)
    try:
        if await service.count_users(db):
            return
        user, key = await service.create_user(db, ADMIN_EMAIL, "admin", admin=True)
        link = await login_link(db, s, user["id"])
    finally:
        await db.dispose()
    # plain print: Rich would wrap the long link and key across lines
    print(f"First start: created the admin user {ADMIN_EMAIL} (no password yet).", flush=True)
    print(f"  Log in to the web UI (one-time link, valid 24 h): {link}")
    print("  To get back in later, set a password: in the web UI (Settings → Password), or")
    print(f"    chatmem users set-password --email {ADMIN_EMAIL}")
    print(f"  or print a new one-time link: chatmem users login-link --email {ADMIN_EMAIL}")
    print("  Admin API key (shown once; send 'Authorization: Bearer <key>'):")
    print(f"  {key}", flush=True)

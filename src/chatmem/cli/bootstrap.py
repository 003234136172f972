"""First start: on an empty database, create an admin and print its API key and a login link.

The login link carries a one-time token (valid 24 h) that becomes a web session when opened, so
nobody has to type the API key into a browser.
"""

from __future__ import annotations

from ..auth import service
from ..config import Settings
from ..db.engine import Database

ADMIN_EMAIL = "admin@localhost"


async def first_start(s: Settings) -> None:
    db = Database(s.database_url)
    try:
        if await service.count_users(db):
            return
        user, key = await service.create_user(db, ADMIN_EMAIL, "admin", admin=True)
        token = await service.create_login_token(db, user["id"], ttl_s=24 * 3600)
    finally:
        await db.dispose()
    base = (
        s.public_url or f"http://{'127.0.0.1' if s.host in ('0.0.0.0', '::') else s.host}:{s.port}"
    )
    # plain print: Rich would wrap the long link and key across lines
    print(f"First start: created the admin user {ADMIN_EMAIL}.", flush=True)
    print(f"  Log in to the web UI (one-time link): {base}/api/auth/magic?token={token}")
    print("  Admin API key (shown once; send 'Authorization: Bearer <key>'):")
    print(f"  {key}", flush=True)

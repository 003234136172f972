"""Deleting an account: every row of the user, in every table, in one transaction.

Why it exists: leaving must be as complete as arriving. The seeds' foreign keys cascade from
``users`` (conversations → messages → stream events, feedback, shares, embeddings, memories →
memory events, projects, agents, keys, sessions …); what no foreign key reaches is deleted
explicitly (``store.purge_user``: jobs naming the user or their conversations, the admin column
of earlier audits). The full-text index rows go with their messages and memories (triggers).
Uploaded import files and built archives are removed from disk after the commit.

A workspace the user owns is not theirs alone: it passes to its longest-standing admin (else
member) and keeps its rows; one nobody else is in is deleted with its rows.

Confirmation is the account's email typed again. The audit row (``account_deletions``) records
who acted (self or an admin's id) and how many rows each table lost — never the deleted user's
id, email or content. The last admin cannot be deleted (the server would have none).
"""

from __future__ import annotations

from ..conversations import forks
from ..db import schema as t
from ..db.clock import now_ms
from ..db.engine import Database
from ..errors import Conflict, Unprocessable
from ..workspaces import store as workspaces
from . import files, store

U = t.users.c


async def delete_account(
    db: Database, user_id: str, confirm: str, *, actor: str, actor_id: str = ""
) -> dict:
    async with db.write() as c:
        user = await store.user_row(c, user_id)
        if confirm.strip().lower() != user.email.lower():
            raise Unprocessable("confirm must be the account's email", code="confirmation_mismatch")
        if user.role == "admin" and await store.admin_count(c) <= 1:
            raise Conflict("the last admin cannot be deleted", code="last_admin")
        # another's fork of this user's conversation, still being copied, is copied first
        await forks.settle_user_in(c, user_id)
        alone = await workspaces.hand_over_owned(c, user_id, now_ms())
        counts = await store.count_user_rows(c, user_id)
        counts["users"] = 1
        paths = await store.user_files(c, user_id)
        for wid in alone:
            await workspaces.delete_workspace(c, wid)
        await store.purge_user(c, user_id)
        audit = await store.add_deletion_audit(c, actor, actor_id, counts)
    await files.remove(*paths)
    return {"audit_id": audit, "deleted": counts}


async def list_deletions(db: Database, limit: int = 100) -> dict:
    async with db.read() as c:
        rows = await store.list_deletions(c, limit)
    return {"items": [dict(r._mapping) for r in rows]}

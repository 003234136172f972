"""Search's SQL outside the message index: title matches and which conversations a user may search.

Titles are few per user, so they keep a plain ``LOWER(title) LIKE`` (substring matching, so "grocer"
finds "Groceries"); message text goes through the full-text index (``index.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.dialect import unindexed
from ..workspaces.store import in_workspace
from . import text as st

C = t.conversations.c
TITLE_LIMIT = 8
#: A workspace search covers the messages of this many of its conversations the caller may see
#: (the most recently updated): the index query ORs their tokens, so its size stays bounded.
WORKSPACE_CONVERSATIONS = 500


def visible(user_id: str):
    """Conversations search may show: the caller's own, personal, unarchived, not inline threads."""
    return (
        C.user_id == user_id,
        unindexed(C.workspace_id) == "",
        C.archived == 0,
        C.inline_source_conv == "",
    )


def visible_in(user_id: str, workspace_id: str):
    """Conversations of a workspace search may show: those the member may see (``is_public``
    rules, ``workspaces.store.visible``), not inline threads."""
    return (in_workspace(C, workspace_id, user_id), C.archived == 0, C.inline_source_conv == "")


async def titles(
    c: AsyncConnection, user_id: str, query: str, workspace_id: str = ""
) -> list[dict]:
    where = visible_in(user_id, workspace_id) if workspace_id else visible(user_id)
    q = (
        select(C.id, C.title, C.project_id, C.agent_id, C.updated_at)
        .where(*where, _title_like(c, st.like_pattern(query)))
        .order_by(C.updated_at.desc(), C.id.desc())
        .limit(TITLE_LIMIT)
    )
    return [dict(r._mapping) for r in (await c.execute(q)).all()]


def _title_like(c: AsyncConnection, pattern: str):
    """``title`` contains the pattern, ignoring case as ``lower`` folds it. SQLite's ``LIKE``
    already ignores ASCII case and its built-in ``lower`` folds ASCII only, so there the plain
    ``LIKE`` is the same test without two function calls per conversation — the title scan
    reads every conversation of the user (10,000 at a million messages): 12.8 → 7.5 ms."""
    if c.dialect.name == "sqlite":
        return C.title.like(literal(pattern), escape=st.ESCAPE)
    return func.lower(C.title).like(func.lower(literal(pattern)), escape=st.ESCAPE)


async def workspace_titles(c: AsyncConnection, user_id: str, workspace_id: str) -> dict[str, str]:
    """{conversation id: title} of the workspace's conversations the member may search (the
    ``WORKSPACE_CONVERSATIONS`` most recently updated)."""
    q = (
        select(C.id, C.title)
        .where(*visible_in(user_id, workspace_id))
        .order_by(C.updated_at.desc(), C.id.desc())
        .limit(WORKSPACE_CONVERSATIONS)
    )
    return {r.id: r.title for r in (await c.execute(q)).all()}


async def visible_titles(c: AsyncConnection, user_id: str, ids: Iterable[str]) -> dict[str, str]:
    """{conversation id: title} for the searchable conversations among ``ids``."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    # by primary key, the visibility checked on the rows (see search/index.rows)
    q = select(C.id, C.title, C.user_id, C.workspace_id, C.archived, C.inline_source_conv).where(
        C.id.in_(ids)
    )
    return {r.id: r.title for r in (await c.execute(q)).all() if searchable(r, user_id)}


def searchable(conv, user_id: str) -> bool:
    """Whether personal search may show a conversation row (``visible`` checked on a fetched row:
    user_id, workspace_id, archived, inline_source_conv)."""
    return (
        conv.user_id == user_id
        and conv.workspace_id == ""
        and not conv.archived
        and conv.inline_source_conv == ""
    )


async def recallable(
    c: AsyncConnection, user_id: str, ids: Iterable[str], agent_id: str | None
) -> set[str]:
    """The conversations among ``ids`` whose messages another conversation may recall: the
    user's own, personal (never a workspace's), not inline threads, and in the same memory scope
    (the same agent, or no agent). Archived conversations are still the user's history."""
    ids = sorted(set(ids))
    if not ids:
        return set()
    q = select(C.id, C.user_id, C.workspace_id, C.inline_source_conv, C.agent_id).where(
        C.id.in_(ids)
    )
    return {
        r.id
        for r in (await c.execute(q)).all()
        if r.user_id == user_id
        and r.workspace_id == ""
        and r.inline_source_conv == ""
        and r.agent_id == agent_id
    }

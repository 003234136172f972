"""Search use-case: the caller's matching conversation titles (8) and messages (40), newest first.

Matching is ``LOWER(column) LIKE LOWER(pattern)`` on both sides, so the two dialects agree on what
matches (SQLite's LOWER folds ASCII only; folding the pattern by the same function keeps exact-case
non-ASCII queries working there).
"""

from __future__ import annotations

from sqlalchemy import func, literal, select

from ..auth.models import Principal
from ..db import schema as t
from ..db.engine import Database
from ..errors import BadRequest
from . import text as st

C = t.conversations.c
M = t.messages.c
TITLE_LIMIT = 8
MESSAGE_LIMIT = 40


def _visible(user_id: str):
    """Conversations search may show: the caller's own, personal, unarchived, not inline threads."""
    return (C.user_id == user_id, C.workspace_id == "", C.archived == 0, C.inline_source_conv == "")


def _matches(col, pattern: str):
    return func.lower(col).like(func.lower(literal(pattern)), escape=st.ESCAPE)


async def search(db: Database, p: Principal, q: str) -> dict:
    query = st.clean_query(q)
    if query is None:
        raise BadRequest(
            f"the query must be at least {st.MIN_QUERY} characters", code="query_too_short"
        )
    pattern = st.like_pattern(query)
    titles = (
        select(C.id, C.title, C.project_id, C.agent_id, C.updated_at)
        .where(*_visible(p.id), _matches(C.title, pattern))
        .order_by(C.updated_at.desc(), C.id.desc())
        .limit(TITLE_LIMIT)
    )
    msgs = (
        select(
            M.id,
            M.conversation_id,
            M.role,
            M.search_text,
            M.created_at,
            C.title.label("conversation_title"),
        )
        .select_from(t.messages.join(t.conversations, C.id == M.conversation_id))
        .where(*_visible(p.id), _matches(M.search_text, pattern))
        .order_by(M.created_at.desc(), M.id.desc())
        .limit(MESSAGE_LIMIT)
    )
    async with db.read() as c:
        conv_rows = (await c.execute(titles)).all()
        msg_rows = (await c.execute(msgs)).all()
    return {
        "query": query,
        "conversations": [dict(r._mapping) for r in conv_rows],
        "messages": [
            {
                "id": r.id,
                "conversation_id": r.conversation_id,
                "conversation_title": r.conversation_title,
                "role": r.role,
                "created_at": r.created_at,
                "snippet": st.snippet(r.search_text, query),
            }
            for r in msg_rows
        ],
    }

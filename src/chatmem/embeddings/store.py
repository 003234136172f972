"""SQL for the ``embeddings`` table: what still needs a vector, writing vectors, reading candidates.

Why it exists: the job and the search share one definition of "embeddable" and of a search scope,
and every read is scoped by ``user_id`` — a vector of another user is never a candidate.

- Embeddable messages: ``complete`` user/assistant messages with visible text (``search_text``).
- Embeddable memories: ACTIVE and QUERY_DEPENDENT ones (what a turn may inject); the migration's
  trigger removes a memory's vector when it leaves those statuses or its text changes.
- Writes re-read the owner rows in the writing transaction (``FOR KEY SHARE`` on PostgreSQL, so a
  concurrent delete waits for the commit instead of breaking the foreign key) and store a vector
  only when the text it was computed from is still the owner's text (``text_hash``): an edit that
  raced the embedder call leaves the row unembedded, and the next job embeds the new text.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, exists, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..db.clock import now_ms
from ..db.dialect import insert
from ..db.ids import new_id
from . import vectors as vec

E = t.embeddings.c
M = t.messages.c
MEM = t.memories.c
INJECTABLE = ("ACTIVE", "QUERY_DEPENDENT")
ROLES = ("user", "assistant")
OWNER_KINDS = ("message", "memory")


@dataclass(frozen=True)
class Pending:
    """An owner row that needs a vector: its id, the text to embed and that text's hash."""

    id: str
    text: str
    text_hash: str


async def pending_messages(
    c: AsyncConnection, conversation_id: str, model: str, limit: int, max_chars: int
) -> list[Pending]:
    """The oldest embeddable messages of a conversation without a vector for ``model``."""
    q = (
        select(M.id, M.search_text)
        .where(
            M.conversation_id == conversation_id,
            M.status == "complete",
            M.role.in_(ROLES),
            M.search_text != "",
            ~exists().where(E.message_id == M.id, E.model == model),
        )
        .order_by(M.created_at, M.id)
        .limit(limit)
    )
    rows = (await c.execute(q)).all()
    return [
        Pending(r.id, vec.clip(r.search_text, max_chars), vec.text_hash(r.search_text))
        for r in rows
        if r.search_text.strip()
    ]


async def pending_memories(
    c: AsyncConnection, user_id: str, model: str, limit: int, max_chars: int
) -> list[Pending]:
    """The user's injectable personal memories without a vector for ``model`` (oldest first);
    a workspace's shared memory is ranked by full text only."""
    q = (
        select(MEM.id, MEM.memory_text)
        .where(
            MEM.user_id == user_id,
            MEM.workspace_id == "",
            MEM.status.in_(INJECTABLE),
            MEM.memory_text != "",
            ~exists().where(E.memory_id == MEM.id, E.model == model),
        )
        .order_by(MEM.created_at, MEM.id)
        .limit(limit)
    )
    rows = (await c.execute(q)).all()
    return [
        Pending(r.id, vec.clip(r.memory_text, max_chars), vec.text_hash(r.memory_text))
        for r in rows
        if r.memory_text.strip()
    ]


async def _upsert(c: AsyncConnection, rows: list[dict], owner: str) -> None:
    ins = insert(c, t.embeddings).values(rows)
    stmt = ins.on_conflict_do_update(
        index_elements=[owner, "model"],
        set_=dict(
            dimensions=ins.excluded.dimensions,
            text_hash=ins.excluded.text_hash,
            vector=ins.excluded.vector,
            created_at=ins.excluded.created_at,
        ),
    )
    await c.execute(stmt)


async def _owners(c: AsyncConnection, q) -> dict:
    """The owner rows of ``items`` as they are now, locked against deletion until commit."""
    if c.dialect.name == "postgresql":
        q = q.with_for_update(key_share=True)
    return {r.id: r for r in (await c.execute(q)).all()}


def _row(p: Pending, blob: bytes, dims: int, model: str, now: int, **owner) -> dict:
    return dict(
        id=new_id("emb"),
        model=model,
        dimensions=dims,
        text_hash=p.text_hash,
        vector=blob,
        created_at=now,
        **{"message_id": None, "memory_id": None, "conversation_id": None, **owner},
    )


async def write_message_vectors(
    c: AsyncConnection, model: str, items: list[tuple[Pending, bytes, int]]
) -> int:
    """Store vectors of messages whose text is unchanged since it was read; returns how many."""
    if not items:
        return 0
    ids = [p.id for p, _, _ in items]
    cols = (M.id, M.user_id, M.conversation_id, M.search_text, M.status)
    current = await _owners(c, select(*cols).where(M.id.in_(ids)))
    now = now_ms()
    rows = []
    for p, blob, dims in items:
        r = current.get(p.id)
        if r is None or r.status != "complete" or vec.text_hash(r.search_text) != p.text_hash:
            continue  # deleted or edited while it was being embedded
        owner = dict(user_id=r.user_id, conversation_id=r.conversation_id, message_id=r.id)
        rows.append(_row(p, blob, dims, model, now, owner_kind="message", **owner))
    if rows:
        await _upsert(c, rows, "message_id")
    return len(rows)


async def write_memory_vectors(
    c: AsyncConnection, user_id: str, model: str, items: list[tuple[Pending, bytes, int]]
) -> int:
    """Store vectors of the user's memories that are unchanged and still injectable."""
    if not items:
        return 0
    ids = [p.id for p, _, _ in items]
    q = select(MEM.id, MEM.memory_text, MEM.status).where(MEM.user_id == user_id, MEM.id.in_(ids))
    current = await _owners(c, q)
    now = now_ms()
    rows = []
    for p, blob, dims in items:
        r = current.get(p.id)
        if r is None or r.status not in INJECTABLE or vec.text_hash(r.memory_text) != p.text_hash:
            continue
        owner = dict(user_id=user_id, memory_id=r.id)
        rows.append(_row(p, blob, dims, model, now, owner_kind="memory", **owner))
    if rows:
        await _upsert(c, rows, "memory_id")
    return len(rows)


async def candidates(
    c: AsyncConnection,
    *,
    user_id: str,
    model: str,
    dims: int,
    owner_kind: str,
    conversation_ids: list[str] | None,
    limit: int,
) -> list[tuple[str, bytes]]:
    """(owner id, vector) of the newest ``limit`` vectors in scope — never another user's."""
    owner = E.message_id if owner_kind == "message" else E.memory_id
    # Only indexed columns in the WHERE (idx_embeddings_user_scope covers the id selection); a
    # vector of another size under the same model key (a server that changed behind its name) is
    # dropped below, after the read.
    conds = [E.user_id == user_id, E.owner_kind == owner_kind, E.model == model]
    scope = sorted(set(conversation_ids)) if conversation_ids is not None else None
    if scope is not None and not scope:
        return []
    if scope is not None and len(scope) == 1:
        # One conversation: its newest rows are a backward range of idx_embeddings_user_scope,
        # read in order and cut at ``limit`` — no sort, no vector read beyond the bound.
        conds.append(E.conversation_id == scope[0])
        q = select(owner, E.vector).where(and_(*conds)).order_by(E.id.desc()).limit(limit)
    else:
        # Several conversations (or all): pick the newest ids from the index first, then read
        # only their vectors — sorting whole rows would drag every candidate's vector through it.
        if scope is not None:
            conds.append(E.conversation_id.in_(scope))
        newest = select(E.id).where(and_(*conds)).order_by(E.id.desc()).limit(limit)
        q = select(owner, E.vector).where(E.id.in_(newest.scalar_subquery()))
    size = 4 * dims
    return [(r[0], bytes(r[1])) for r in (await c.execute(q)).all() if len(r[1]) == size]


async def counts(c: AsyncConnection) -> list[dict]:
    """Vectors per (model, owner kind): the operators' view."""
    q = (
        select(E.model, E.owner_kind, E.dimensions, func.count().label("n"))
        .group_by(E.model, E.owner_kind, E.dimensions)
        .order_by(E.model, E.owner_kind)
    )
    return [dict(r._mapping) for r in (await c.execute(q)).all()]


async def conversation_owner(c: AsyncConnection, conversation_id: str) -> str | None:
    """The conversation's user id; None once it is deleted."""
    q = select(t.conversations.c.user_id).where(t.conversations.c.id == conversation_id)
    return (await c.execute(q)).scalar_one_or_none()


async def ids_after(c: AsyncConnection, table, after: str, page: int) -> list[str]:
    """A page of ``table``'s ids after ``after``, in id order (the backfill's walk)."""
    q = select(table.c.id).where(table.c.id > after).order_by(table.c.id).limit(page)
    return list((await c.execute(q)).scalars())


async def pgvector_extension(c: AsyncConnection):
    """pg_available_extensions' row for ``vector`` (installed_version), or None."""
    q = text("SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'")
    return (await c.execute(q)).first()

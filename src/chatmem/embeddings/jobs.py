"""The background embedding jobs and the one call the write paths make to schedule them.

Why it exists: embedding is slow (a model or a network call) and must never sit on the request
path, yet every visible message and injectable memory should get a vector soon after it is
written. ``schedule_embedding(c, conversation_id)`` is called in the transaction that wrote the
messages (a completed turn, a log-mode append); it enqueues ``embed.conversation`` with the dedupe
key ``embed:conv:<id>`` and a short debounce (``embedding_debounce_ms``), so a bulk import of
10,000 messages folds into one queued job at a time — one job stream per conversation, never a
job per message. It is a no-op (nothing written) when this process has no embedder configured.

``embed.conversation`` embeds the conversation's unembedded messages oldest first, in batches of
``embedding_batch_size``, each batch written in its own short transaction (the embedder runs with
no connection held); after ``embedding_batches_per_job`` batches it re-queues itself so one huge
import cannot hold a worker for long. Memory writes schedule ``embed.memories`` (dedupe
``embed:mem:<user>``) themselves; the conversation job also schedules it when the owner has
injectable memories without a vector (written before embeddings were turned on). Failures
are retried with the queue's exponential backoff; an answer no retry can fix (bad key, unknown
model, vectors of the wrong size) fails the job at once with the reason in ``last_error``. The
jobs are idempotent: re-running one finds nothing left to do.
"""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from ..jobs.queue import Permanent, enqueue
from . import service as svc_mod
from . import store
from . import vectors as vec
from .base import EmbedderError

log = logging.getLogger(__name__)
KIND_CONVERSATION = "embed.conversation"
KIND_MEMORIES = "embed.memories"


async def schedule_embedding(c: AsyncConnection, conversation_id: str) -> str | None:
    """Queue embedding of ``conversation_id``'s new messages (in the caller's transaction).

    Returns the new job id, or None when embeddings are off or a job is already queued."""
    cfg = svc_mod.config_for(c)
    if cfg is None:
        return None
    return await enqueue(
        c,
        KIND_CONVERSATION,
        {"conversation_id": conversation_id},
        dedupe_key=f"embed:conv:{conversation_id}",
        delay_ms=cfg.debounce_ms,
    )


async def schedule_memories(c: AsyncConnection, user_id: str) -> str | None:
    """Queue embedding of ``user_id``'s injectable memories that have no vector yet."""
    if svc_mod.config_for(c) is None:
        return None
    return await enqueue(c, KIND_MEMORIES, {"user_id": user_id}, dedupe_key=f"embed:mem:{user_id}")


def _service(rt) -> svc_mod.EmbeddingService:
    s = svc_mod.get(rt)
    if s is None:
        raise Permanent("embeddings are not configured in this process (CHATMEM_EMBEDDER)")
    return s


async def _vectors(s: svc_mod.EmbeddingService, pending: list[store.Pending]) -> list:
    try:
        got = await s.embed([p.text for p in pending])
    except EmbedderError as e:
        if e.permanent:
            raise Permanent(str(e)) from e
        raise
    out = []
    for p, v in zip(pending, got, strict=True):
        if v is None:
            log.warning("embeddings: %s embedded to a zero vector; skipped", p.id)
            continue
        out.append((p, vec.pack(v), len(v)))
    return out


async def embed_conversation(rt, conversation_id: str) -> dict:
    """Embed up to ``embedding_batches_per_job`` batches; returns {embedded, more}."""
    s = _service(rt)
    st = s.settings
    batch, max_chars = int(st.embedding_batch_size), int(st.embedding_max_chars)
    async with rt.db.read() as c:
        user_id = await store.conversation_owner(c, conversation_id)
    if user_id is None:
        return {"embedded": 0, "more": False}  # deleted meanwhile: its vectors went with it
    done, more = 0, False
    for i in range(int(st.embedding_batches_per_job)):
        async with rt.db.read() as c:
            pending = await store.pending_messages(
                c, conversation_id, s.model_key, batch, max_chars
            )
        if not pending:
            break
        items = await _vectors(s, pending)
        async with rt.db.write() as c:
            wrote = await store.write_message_vectors(c, s.model_key, items)
        done += wrote
        if wrote == 0:  # every row changed under us: the job scheduled by that change goes on
            break
        more = i == int(st.embedding_batches_per_job) - 1
    async with rt.db.read() as c:  # memories written before embeddings were on (a backfill)
        memories_wait = bool(await store.pending_memories(c, user_id, s.model_key, 1, max_chars))
    if more or memories_wait:
        async with rt.db.write() as c:
            if more:
                await enqueue(
                    c,
                    KIND_CONVERSATION,
                    {"conversation_id": conversation_id},
                    dedupe_key=f"embed:conv:{conversation_id}",
                )
            if memories_wait:
                await schedule_memories(c, user_id)
    return {"embedded": done, "more": more}


async def embed_memories(rt, user_id: str) -> dict:
    s = _service(rt)
    st = s.settings
    batch, max_chars = int(st.embedding_batch_size), int(st.embedding_max_chars)
    done, more = 0, False
    for i in range(int(st.embedding_batches_per_job)):
        async with rt.db.read() as c:
            pending = await store.pending_memories(c, user_id, s.model_key, batch, max_chars)
        if not pending:
            break
        items = await _vectors(s, pending)
        async with rt.db.write() as c:
            wrote = await store.write_memory_vectors(c, user_id, s.model_key, items)
        done += wrote
        if wrote == 0:
            break
        more = i == int(st.embedding_batches_per_job) - 1
    if more:
        async with rt.db.write() as c:
            await schedule_memories(c, user_id)
    return {"embedded": done, "more": more}


async def embed_conversation_job(rt, payload: dict) -> None:
    await embed_conversation(rt, payload["conversation_id"])


async def embed_memories_job(rt, payload: dict) -> None:
    await embed_memories(rt, payload["user_id"])


async def backfill(db, *, page: int = 1000) -> dict:
    """Queue embedding for every conversation and every user with memories — for history written
    before embeddings were turned on, or after switching models (``chatmem embeddings backfill``).
    Enqueues only (the workers embed); deduplicated, so running it twice queues nothing new."""
    queued = {"conversations": 0, "users": 0}
    for table, kind, key, field in (
        (t.conversations, KIND_CONVERSATION, "embed:conv:", "conversation_id"),
        (t.users, KIND_MEMORIES, "embed:mem:", "user_id"),
    ):
        after = ""
        while True:
            async with db.read() as c:
                ids = await store.ids_after(c, table, after, page)
            if not ids:
                break
            async with db.write() as c:
                for oid in ids:
                    if await enqueue(c, kind, {field: oid}, dedupe_key=key + oid):
                        queued["conversations" if table is t.conversations else "users"] += 1
            after = ids[-1]
    return queued

"""Vector search over stored embeddings, and embedding a turn's query within a deadline.

Why it exists: recall (context/) and memory retrieval rank by meaning as well as by words when an
embedder is configured. Both functions are safe to call when embeddings are off or failing:
``embed_query`` answers None (callers fall back to full text) and ``vector_search`` answers [].

**The candidate bound.** ``vector_search`` scores the newest ``max_candidates`` vectors in scope
(``CHATMEM_EMBEDDING_MAX_CANDIDATES``, 10,000 by default) exactly — brute-force cosine, no
approximate index. Why: the scope is one user's conversations, usually one conversation, which
almost always fits whole (690 turns is a long conversation), so the answer is exact; past the
bound the cost stops growing with history (10,000 × 384 float32 ≈ 15 MB read — the read, not the
arithmetic, is the cost — and one matrix-vector product), while full-text search still covers
every message. One conversation's newest vectors are one backward range of
``idx_embeddings_user_scope`` (no sort); several conversations pick their newest ids from the
index before any vector is read. Other users' vectors are never read. bench/embeddings.py
measures 1,000 vs 100,000 vectors.

sqlite-vec and pgvector are detected, not used: ``GET /api/admin/embeddings`` reports whether
either could be (this project's Python cannot load SQLite extensions and its PostgreSQL has no
pgvector, so an in-database path could not be tested here; it is the next step for users whose
scopes outgrow the bound).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from . import service as svc_mod
from . import store
from . import vectors as vec
from .service import QueryVector

log = logging.getLogger(__name__)
DEFAULT_MAX_CANDIDATES = 10_000


async def vector_search(
    c: AsyncConnection,
    *,
    user_id: str,
    query_vector: Sequence[float] | QueryVector,
    model: str | None = None,
    conversation_ids: Sequence[str] | None = None,
    owner_kind: str = "message",
    limit: int = 50,
    max_candidates: int | None = None,
) -> list[tuple[str, float]]:
    """The ``limit`` owners (message or memory ids) most similar to ``query_vector``, best first,
    as ``(owner_id, cosine similarity in [-1, 1])``.

    ``model`` is the model key the query was embedded under (``QueryVector.model``; taken from a
    ``QueryVector`` when omitted). ``conversation_ids`` limits messages to those conversations
    (None = all of the user's); only ``user_id``'s vectors are ever read. ``max_candidates``
    defaults to the runtime's ``embedding_max_candidates``.
    """
    if owner_kind not in store.OWNER_KINDS:
        raise ValueError(f"owner_kind must be one of {store.OWNER_KINDS}")
    if isinstance(query_vector, QueryVector):
        model = model or query_vector.model
        query_vector = query_vector.vector
    if not model:
        raise ValueError("vector_search needs the model key the query was embedded with")
    q = vec.normalise(query_vector)
    if q is None or limit <= 0:
        return []
    if max_candidates is None:
        cfg = svc_mod.config_for(c)
        max_candidates = cfg.max_candidates if cfg else DEFAULT_MAX_CANDIDATES
    rows = await store.candidates(
        c,
        user_id=user_id,
        model=model,
        dims=len(q),
        owner_kind=owner_kind,
        conversation_ids=None if conversation_ids is None else list(conversation_ids),
        limit=max(1, int(max_candidates)),
    )
    if not rows:
        return []
    ids = [r[0] for r in rows]
    sims = vec.scores(q, [r[1] for r in rows], len(q))
    return vec.top_k(ids, sims, limit)


async def embed_query(rt, text: str, *, timeout_s: float | None = None) -> QueryVector | None:
    """The unit vector of ``text`` (a turn's latest user message), or None — when embeddings are
    off, the text is blank, the embedder fails, or it takes longer than ``timeout_s``
    (``CHATMEM_EMBEDDING_QUERY_TIMEOUT_S``, 2 s by default). Never raises: recall must fall back
    to full text, never break a turn. Recent queries are cached, so calling it twice per turn
    costs one embedding."""
    s = svc_mod.get(rt)
    text = (text or "").strip()
    if s is None or not text:
        return None
    key = vec.clip(text, int(s.settings.embedding_max_chars))
    hit = s.cached_query(key)
    if hit is not None:
        return hit
    timeout = float(timeout_s if timeout_s is not None else s.settings.embedding_query_timeout_s)
    try:
        [v] = await asyncio.wait_for(s.embed([key]), timeout=timeout)
    except TimeoutError:
        log.warning("embeddings: query embedding took longer than %.1fs; full text only", timeout)
        return None
    except Exception as e:
        log.warning(
            "embeddings: query embedding failed (%s: %s); full text only", type(e).__name__, e
        )
        return None
    if v is None:
        return None
    qv = QueryVector(s.model_key, tuple(v))
    s.remember_query(key, qv)
    return qv


def cached_query(rt, text: str) -> QueryVector | None:
    """The vector ``embed_query`` already computed for ``text``, without embedding anything (for
    code that holds a database connection and must not wait on a model)."""
    s = svc_mod.get(rt)
    text = (text or "").strip()
    if s is None or not text:
        return None
    return s.cached_query(vec.clip(text, int(s.settings.embedding_max_chars)))

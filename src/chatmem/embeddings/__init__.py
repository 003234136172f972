"""Embeddings, pluggable and optional: vectors of messages and memories for recall by meaning.

Off unless ``CHATMEM_EMBEDDER`` names an embedder (entry-point group ``chatmem.embedders``):
``openai`` (any /v1/embeddings server by base URL), ``local`` (sentence-transformers, offline;
``pip install 'chatmem[local]'``) or ``hashing`` (deterministic and lexical, for tests and demos).
When on, a background job embeds messages and injectable memories after they are written (never
on the request path) into the portable ``embeddings`` table, and search scores a bounded
candidate set by cosine similarity.

The surface other packages use:

- ``schedule_embedding(c, conversation_id)`` — call in the transaction that wrote messages;
- ``embeddings_on(db)`` — whether that call writes anything (before a connection is opened);
- ``embed_query(rt, text, timeout_s=None) -> QueryVector | None`` — a turn's query vector;
- ``vector_search(c, *, user_id, query_vector, model=None, conversation_ids=None,
  owner_kind="message", limit=50, max_candidates=None) -> list[(owner_id, score)]``;
- ``cached_query(rt, text)`` — the vector ``embed_query`` computed, without embedding.
"""

from .jobs import schedule_embedding, schedule_memories
from .search import cached_query, embed_query, vector_search
from .service import QueryVector
from .service import enabled as embeddings_on

__all__ = [
    "QueryVector",
    "cached_query",
    "embed_query",
    "embeddings_on",
    "schedule_embedding",
    "schedule_memories",
    "vector_search",
]

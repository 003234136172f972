"""The per-runtime embedding service: the configured embedder, its model key, and checked vectors.

Why it exists: the job and the query path both need "texts → unit float32 vectors of one size,
under one model key", with the embedder's failures classified (retry or give up) and its output
validated (count, size, finite values) before anything is stored. It also keeps a small cache of
recent query vectors, so the recall and memory sections of one turn (and a regeneration of it)
embed the latest user message once.

``get(rt)`` is the service, or None when embeddings are off. ``install`` (routes.py) builds it at
start and registers the runtime's database engine (``enable``), so code that holds only a
connection — ``schedule_embedding`` in a write path, ``vector_search`` — knows whether embeddings
are on and with which limits.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from . import registry
from . import vectors as vec
from .base import Embedder, EmbedderError

log = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 256


@dataclass(frozen=True)
class QueryVector:
    """A query's unit vector and the model key it must be compared under."""

    model: str
    vector: tuple[float, ...]


class EmbeddingService:
    def __init__(self, settings, embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self.model_key = registry.model_key(settings, embedder)
        self.dimensions = int(getattr(settings, "embedding_dimensions", 0) or 0)
        self._queries: OrderedDict[str, QueryVector] = OrderedDict()

    async def embed(self, texts: list[str]) -> list[list[float] | None]:
        """Unit vectors for ``texts`` (None for a text the model mapped to a zero vector).

        Raises ``EmbedderError`` (``permanent`` for answers no retry can fix)."""
        if not texts:
            return []
        raw = await self.embedder.embed(texts)
        if len(raw) != len(texts):
            raise EmbedderError(
                f"{self.embedder.name}: {len(raw)} vectors for {len(texts)} texts", permanent=True
            )
        sizes = {len(v) for v in raw}
        if len(sizes) != 1 or 0 in sizes:
            raise EmbedderError(
                f"{self.embedder.name}: vectors of sizes {sorted(sizes)}", permanent=True
            )
        if self.dimensions and sizes != {self.dimensions}:
            raise EmbedderError(
                f"{self.embedder.name}: vectors have {sizes.pop()} dimensions, "
                f"CHATMEM_EMBEDDING_DIMENSIONS is {self.dimensions}",
                permanent=True,
            )
        return [vec.normalise(v) for v in raw]

    def cached_query(self, text: str) -> QueryVector | None:
        qv = self._queries.get(text)
        if qv is not None:
            self._queries.move_to_end(text)
        return qv

    def remember_query(self, text: str, qv: QueryVector) -> None:
        self._queries[text] = qv
        self._queries.move_to_end(text)
        while len(self._queries) > QUERY_CACHE_SIZE:
            self._queries.popitem(last=False)

    async def aclose(self) -> None:
        await self.embedder.aclose()


def get(rt) -> EmbeddingService | None:
    """The runtime's embedding service (``Runtime.embeddings``; None = embeddings off)."""
    return rt.embeddings if rt is not None else None


class Lifecycle:
    """Runtime service: keeps the engine registered while running, warms the embedder up in the
    background (a local model loads in seconds; the first turn's query should not pay for it and
    time out), closes the embedder after."""

    def __init__(self, db, settings, s: EmbeddingService) -> None:
        self.db, self.settings, self.s = db, settings, s
        self.warming: asyncio.Task | None = None

    async def start(self) -> None:
        enable(self.db, self.settings)
        warm = getattr(self.s.embedder, "warm", None)
        if warm is not None:
            self.warming = asyncio.create_task(self._warm(warm), name="embedder-warm-up")

    @staticmethod
    async def _warm(warm) -> None:
        try:
            await warm()
        except Exception:  # the jobs will report it; a server must start without its model
            log.exception("embeddings: warming the embedder up failed")

    async def stop(self) -> None:
        disable(self.db)
        if self.warming is not None:
            await self.warming  # a model load in a thread cannot be cancelled: let it finish
        await self.s.aclose()


@dataclass(frozen=True)
class DbConfig:
    """What connection-only callers need: the job debounce and the search candidate bound."""

    debounce_ms: int
    max_candidates: int


_BY_ENGINE: weakref.WeakKeyDictionary[object, DbConfig] = weakref.WeakKeyDictionary()


def enable(db, settings) -> None:
    _BY_ENGINE[db.engine.sync_engine] = DbConfig(
        debounce_ms=int(settings.embedding_debounce_ms),
        max_candidates=int(settings.embedding_max_candidates),
    )


def disable(db) -> None:
    _BY_ENGINE.pop(db.engine.sync_engine, None)


def enabled(db) -> bool:
    """Whether the runtime that owns ``db`` (a ``Database``) embeds: ``schedule_embedding``
    writes something (a caller that must know before it opens a connection)."""
    return db.engine.sync_engine in _BY_ENGINE


def config_for(c) -> DbConfig | None:
    """The embedding config of the runtime that owns connection ``c`` (None = embeddings off)."""
    return _BY_ENGINE.get(c.sync_engine)

"""The embeddings admin route: shows operators the embedder's state.

(The composition root, ``app.create_runtime``, loads ``CHATMEM_EMBEDDER`` through the registry —
an unknown name or a refused configuration raises at ``create_app``, before the server accepts a
request — and registers ``service.Lifecycle``, which closes the embedder on shutdown. With no
embedder configured ``schedule_embedding`` stays a no-op.) ``GET /api/admin/embeddings`` (admins)
reports the embedder,
its model key, stored vector counts per model, and whether sqlite-vec / pgvector are present.
"""

from __future__ import annotations

import importlib.util
import sqlite3

from fastapi import APIRouter

from ..auth.deps import CurrentAdmin, RuntimeDep
from ..contracts.base import Output
from ..contracts.errors import AUTHED, errors
from . import registry, store
from . import service as svc_mod

router = APIRouter(prefix="/api/admin/embeddings", tags=["embeddings"], responses=errors(*AUTHED))


class VectorCount(Output):
    model: str
    owner_kind: str
    dimensions: int
    n: int


class EmbeddingsStatus(Output):
    enabled: bool
    embedder: str
    model: str
    model_key: str
    installed_embedders: list[str]
    vectors: list[VectorCount]
    backends: dict[str, bool]
    search: str


async def backends(c) -> dict:
    """Which in-database vector engines exist here (reported; the search does not need them)."""
    if c.dialect.name == "sqlite":
        loadable = hasattr(sqlite3.Connection, "enable_load_extension")
        return {
            "sqlite_vec_installed": importlib.util.find_spec("sqlite_vec") is not None,
            "sqlite_extensions_loadable": loadable,
        }
    row = await store.pgvector_extension(c)
    return {"pgvector_available": row is not None, "pgvector_installed": bool(row and row[0])}


@router.get("", response_model=EmbeddingsStatus)
async def embeddings_status(_p: CurrentAdmin, rt: RuntimeDep):
    s = svc_mod.get(rt)
    async with rt.db.read() as c:
        counts = await store.counts(c)
        found = await backends(c)
    return {
        "enabled": s is not None,
        "embedder": s.embedder.name if s else "",
        "model": s.embedder.model if s else "",
        "model_key": s.model_key if s else "",
        "installed_embedders": sorted(registry.available()),
        "vectors": counts,
        "backends": found,
        "search": "exact cosine over the newest "
        f"{int(rt.settings.embedding_max_candidates)} vectors in scope",
    }

"""The embeddings feature: builds the configured embedder at start and shows operators its state.

``install(rt)`` loads ``CHATMEM_EMBEDDER`` through the registry — an unknown name or a refused
configuration raises at ``create_app``, before the server accepts a request — and registers a
service that closes the embedder on shutdown. With no embedder configured it does nothing, and
``schedule_embedding`` stays a no-op. ``GET /api/admin/embeddings`` (admins) reports the embedder,
its model key, stored vector counts per model, and whether sqlite-vec / pgvector are present.
"""

from __future__ import annotations

import importlib.util
import sqlite3

from fastapi import APIRouter, Depends
from sqlalchemy import text

from ..auth.deps import current_admin, get_runtime
from ..auth.models import Principal
from ..contracts.base import Output
from ..contracts.errors import AUTHED, errors
from ..runtime import Runtime
from . import (
    jobs,  # noqa: F401 - registers the job handlers in every process
    registry,
    store,
)
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


class _Lifecycle:
    """Runtime service: keeps the engine registered while running, closes the embedder after."""

    def __init__(self, rt: Runtime, s: svc_mod.EmbeddingService) -> None:
        self.rt, self.s = rt, s

    async def start(self) -> None:
        svc_mod.enable(self.rt.db, self.rt.settings)

    async def stop(self) -> None:
        svc_mod.disable(self.rt.db)
        await self.s.aclose()


def install(rt: Runtime) -> None:
    if svc_mod.STATE_KEY in rt.extras:
        return
    embedder = registry.load(rt.settings)
    if embedder is None:
        return
    s = svc_mod.EmbeddingService(rt.settings, embedder)
    rt.extras[svc_mod.STATE_KEY] = s
    svc_mod.enable(rt.db, rt.settings)
    rt.services.append(_Lifecycle(rt, s))


async def backends(c) -> dict:
    """Which in-database vector engines exist here (reported; the search does not need them)."""
    if c.dialect.name == "sqlite":
        loadable = hasattr(sqlite3.Connection, "enable_load_extension")
        return {
            "sqlite_vec_installed": importlib.util.find_spec("sqlite_vec") is not None,
            "sqlite_extensions_loadable": loadable,
        }
    row = (
        await c.execute(
            text("SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'")
        )
    ).first()
    return {"pgvector_available": row is not None, "pgvector_installed": bool(row and row[0])}


@router.get("", response_model=EmbeddingsStatus)
async def embeddings_status(
    _p: Principal = Depends(current_admin), rt: Runtime = Depends(get_runtime)
):
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

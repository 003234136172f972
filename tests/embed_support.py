"""Helpers for the embeddings tests: log-mode appends, draining the job queue, reading vectors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from sqlalchemy import func, select

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.embeddings import embed_query, vector_search
from chatmem.embeddings import jobs as ejobs
from chatmem.jobs.worker import Worker

from .conftest import ApiUser

E = t.embeddings.c


@asynccontextmanager
async def running_app(settings, email: str) -> AsyncIterator[tuple]:
    """(runtime, ApiUser) of an app built from ``settings``, started and stopped around the block."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        rt = app.state.runtime
        user, key = await auth_service.create_user(rt.db, email)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        ) as client:
            yield rt, ApiUser(user["id"], email, key, client)


async def new_conv(u, **body) -> str:
    r = await u.client.post("/api/conversations", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def say(u, cid: str, text: str, role: str = "user") -> str:
    r = await u.client.post(
        f"/api/conversations/{cid}/messages",
        json={"content": text, "role": role, "generate": False},
    )
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def drain(rt, limit: int = 500) -> list[dict]:
    """Run the embedding jobs until none is left (retries with a tiny backoff are waited for);
    other jobs (memory, compaction, follow-ups) are left alone."""
    kinds = [ejobs.KIND_CONVERSATION, ejobs.KIND_MEMORIES]
    w = Worker(rt, kinds=kinds)
    out, idle = [], 0
    while len(out) < limit and idle < 40:
        job = await w.run_once()
        if job is None:
            async with rt.db.read() as c:
                queued = (
                    await c.execute(
                        select(func.count())
                        .select_from(t.jobs)
                        .where(t.jobs.c.status.in_(("queued", "running")), t.jobs.c.kind.in_(kinds))
                    )
                ).scalar()
            if not queued:
                break
            idle += 1
            await asyncio.sleep(0.02)
        else:
            out.append(job)
    return out


async def vectors(db, **where) -> list[dict]:
    q = select(t.embeddings)
    for k, v in where.items():
        q = q.where(getattr(E, k) == v)
    async with db.read() as c:
        return [dict(r._mapping) for r in (await c.execute(q)).all()]


async def search(rt, user_id: str, text: str, **kw) -> list[tuple[str, float]]:
    qv = await embed_query(rt, text)
    assert qv is not None
    async with rt.db.read() as c:
        return await vector_search(c, user_id=user_id, query_vector=qv, **kw)


class ConceptEmbedder:
    """A deterministic fake embedder that knows paraphrases: one dimension per concept (any of
    its words in the text), plus a small constant one so no vector is zero."""

    name = "concepts"
    CONCEPTS = (("language", "languages", "studying", "learning", "swahili"),)

    def __init__(self, settings=None) -> None:
        self.model = "concepts-v1"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            words = set(text.lower().replace("?", " ").replace(".", " ").split())
            out.append([1.0 if words & set(c) else 0.0 for c in self.CONCEPTS] + [0.1])
        return out

    async def aclose(self) -> None:
        return None

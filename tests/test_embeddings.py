"""Embeddings end to end on SQLite and PostgreSQL: the hashing embedder (loaded through the real
``chatmem.embedders`` entry point) drives the real schedule → job → storage → search path.

Covered: log-mode appends fold into one job stream; completed turns embed both messages; search
finds the right message and never another user's; edits re-embed (the stale vector is gone at
once); deleting a message, conversation, memory or user deletes its vectors; the write re-checks
the text hash; transient failures retry, permanent ones fail the job; memories get vectors and
memory retrieval uses them; everything is a no-op when no embedder is configured.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest
from sqlalchemy import delete, select, update

from chatmem.db import schema as t
from chatmem.embeddings import embed_query, schedule_embedding, vector_search
from chatmem.embeddings import jobs as ejobs
from chatmem.embeddings import service as esvc
from chatmem.embeddings import store as estore
from chatmem.embeddings.base import EmbedderError
from chatmem.embeddings.hashing import HashingEmbedder
from chatmem.memory import retrieval

from .conftest import make_settings
from .ctx_helpers import job_rows
from .embed_support import drain, new_conv, say, search, vectors

FACTS = [
    "My sister Alice lives in Lisbon and teaches piano",
    "We adopted a grey cat called Pixel last spring",
    "The quarterly budget review moved to Thursday afternoon",
    "I am allergic to peanuts and shellfish",
    "Our team ships the mobile release every second Monday",
]


@pytest.fixture
def settings(db_url):
    return make_settings(
        db_url,
        embedder="hashing",
        embedding_debounce_ms=0,
        embedding_query_timeout_s=60,  # a loaded test machine must not turn a query into None
        run_worker=False,
        job_backoff_s=0.001,
        job_backoff_max_s=0.01,
    )


def rt_of(app):
    return app.state.runtime


async def test_log_mode_appends_are_embedded_by_one_job_stream(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    cid = await new_conv(u)
    ids = [await say(u, cid, f"note {i}: {FACTS[i % 5]}") for i in range(150)]
    jobs = await job_rows(rt.db, ejobs.KIND_CONVERSATION)
    assert len(jobs) == 1 and jobs[0]["dedupe_key"] == f"embed:conv:{cid}"
    assert await vectors(rt.db) == []  # nothing on the request path

    rt.settings.embedding_batch_size = 16
    rt.settings.embedding_batches_per_job = 3  # 150 messages → 48 per run → 4 runs
    ran = await drain(rt)
    conv_runs = [j for j in ran if j["kind"] == ejobs.KIND_CONVERSATION]
    assert len(conv_runs) == 4 and all(j["outcome"] == "done" for j in ran)
    got = await vectors(rt.db, conversation_id=cid)
    assert sorted(v["message_id"] for v in got) == sorted(ids)
    assert {v["model"] for v in got} == {"hashing:bow-256"}
    assert {v["dimensions"] for v in got} == {256} and all(len(v["vector"]) == 1024 for v in got)
    assert await drain(rt) == []  # idempotent: nothing left


async def test_search_finds_the_message_and_respects_scope(app, new_user):
    rt = rt_of(app)
    alice, bob = await new_user(), await new_user()
    a1, a2 = await new_conv(alice), await new_conv(alice)
    b1 = await new_conv(bob)
    a_ids = [await say(alice, a1, f) for f in FACTS]
    other = await say(alice, a2, "Peanuts are in the satay sauce recipe")
    await say(bob, b1, "I am allergic to peanuts and shellfish too")
    await drain(rt)

    hits = await search(rt, alice.id, "which foods is she allergic to? peanuts", limit=3)
    assert hits[0][0] == a_ids[3]
    assert -1.0 <= hits[-1][1] <= hits[0][1] <= 1.0
    # conversation scope: only a1's messages; user-wide: a2's too; never bob's
    scoped = await search(rt, alice.id, "peanuts", conversation_ids=[a1], limit=10)
    assert {i for i, _ in scoped} <= set(a_ids)
    everywhere = {i for i, _ in await search(rt, alice.id, "peanuts", limit=50)}
    assert other in everywhere and a_ids[3] in everywhere
    bob_msgs = {v["message_id"] for v in await vectors(rt.db, user_id=bob.id)}
    assert bob_msgs and not (everywhere & bob_msgs)
    # another user's conversation id in the scope reads nothing of it
    assert await search(rt, alice.id, "peanuts", conversation_ids=[b1], limit=10) == []
    assert await search(rt, bob.id, "peanuts", conversation_ids=[a1], limit=10) == []


async def test_candidate_bound_keeps_the_newest(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    cid = await new_conv(u)
    ids = [await say(u, cid, f"entry {i} about gardening tomatoes") for i in range(12)]
    await drain(rt)
    qv = await embed_query(rt, "gardening tomatoes")
    async with rt.db.read() as c:
        hits = await vector_search(c, user_id=u.id, query_vector=qv, limit=50, max_candidates=5)
        one = await vector_search(
            c, user_id=u.id, query_vector=qv, conversation_ids=[cid], limit=50, max_candidates=5
        )
        default = await vector_search(c, user_id=u.id, query_vector=qv, limit=50)
    assert len(hits) == 5 and len(default) == 12
    newest = {v["message_id"] for v in sorted(await vectors(rt.db), key=lambda v: v["id"])[-5:]}
    assert {i for i, _ in hits} == newest == {i for i, _ in one} and newest <= set(ids)


async def test_completed_turn_embeds_both_messages(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    cid = await new_conv(u)
    r = await u.client.post(f"/api/conversations/{cid}/messages", json={"content": "Hello there"})
    assert r.status_code == 202, r.text
    body = r.json()
    user_mid = body.get("user_message", {}).get("id") or body.get("user_message_id")
    for _ in range(1200):  # the turn runs detached; on a loaded machine it may take seconds
        jobs = await job_rows(rt.db, ejobs.KIND_CONVERSATION)
        if jobs:
            break
        await asyncio.sleep(0.025)
    assert len(jobs) == 1
    await drain(rt)
    got = await vectors(rt.db, conversation_id=cid)
    roles = set()
    async with rt.db.read() as c:
        for v in got:
            roles.add(
                (
                    await c.execute(
                        select(t.messages.c.role).where(t.messages.c.id == v["message_id"])
                    )
                ).scalar()
            )
    assert roles == {"user", "assistant"} and len(got) == 2
    assert user_mid is None or user_mid in {v["message_id"] for v in got}


async def test_edit_drops_the_stale_vector_and_reembeds(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    cid = await new_conv(u)
    mid = await say(u, cid, "The wedding is in Porto in June")
    await say(u, cid, "Remember to book the flights early")
    await drain(rt)
    [old] = await vectors(rt.db, message_id=mid)

    r = await u.client.patch(
        f"/api/conversations/{cid}/messages/{mid}", json={"content": "The reunion is in Oslo"}
    )
    assert r.status_code == 200, r.text
    assert await vectors(rt.db, message_id=mid) == []  # gone in the edit's own transaction
    hits = await search(rt, u.id, "wedding Porto June", conversation_ids=[cid])
    assert mid not in {i for i, _ in hits}  # the old text no longer finds it
    await drain(rt)
    [new] = await vectors(rt.db, message_id=mid)
    assert new["text_hash"] != old["text_hash"] and new["vector"] != old["vector"]
    hits = await search(rt, u.id, "reunion in Oslo", conversation_ids=[cid], limit=1)
    assert hits[0][0] == mid


async def test_write_refuses_a_vector_of_text_that_changed(app, new_user):
    rt = rt_of(app)
    s = esvc.get(rt)
    u = await new_user()
    cid = await new_conv(u)
    mid = await say(u, cid, "original words")
    async with rt.db.read() as c:
        [p] = await estore.pending_messages(c, cid, s.model_key, 10, 8000)
    [v] = await s.embed([p.text])
    async with rt.db.write() as c:  # an edit lands while the embedder was running
        await c.execute(
            update(t.messages).where(t.messages.c.id == mid).values(search_text="edited words")
        )
    async with rt.db.write() as c:
        n = await estore.write_message_vectors(c, s.model_key, [(p, b"\0" * 4 * len(v), len(v))])
    assert n == 0 and await vectors(rt.db, message_id=mid) == []


async def test_deletes_take_their_vectors(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    c1, c2 = await new_conv(u), await new_conv(u)
    q = await say(u, c1, "question one about sailing")
    a = await say(u, c1, "answer one about sailing", role="assistant")
    keep = await say(u, c1, "question two about climbing")
    await say(u, c2, "another conversation entirely")
    r = await u.client.post("/api/me/memories", json={"memory_text": "Likes sailing at dawn"})
    assert r.status_code == 201, r.text
    mem_a = r.json()["id"]
    r = await u.client.post("/api/me/memories", json={"memory_text": "Prefers tea to coffee"})
    mem_b = r.json()["id"]
    await drain(rt)
    assert len(await vectors(rt.db, owner_kind="memory")) == 2
    assert len(await vectors(rt.db, owner_kind="message")) == 4

    # a round (question + answer)
    r = await u.client.delete(f"/api/conversations/{c1}/messages/{q}")
    assert r.status_code == 200, r.text
    left = {v["message_id"] for v in await vectors(rt.db, conversation_id=c1)}
    assert left == {keep} and a not in left
    # a conversation
    assert (await u.client.delete(f"/api/conversations/{c2}")).status_code in (200, 204)
    assert await vectors(rt.db, conversation_id=c2) == []
    # a memory: soft delete (trigger) and purge (foreign key)
    assert (await u.client.delete(f"/api/me/memories/{mem_a}")).status_code == 204
    assert await vectors(rt.db, memory_id=mem_a) == []
    assert (await u.client.delete(f"/api/me/memories/{mem_b}?purge=true")).status_code == 204
    assert await vectors(rt.db, memory_id=mem_b) == []
    # a user
    assert await vectors(rt.db, user_id=u.id)
    async with rt.db.write() as c:
        await c.execute(delete(t.users).where(t.users.c.id == u.id))
    assert await vectors(rt.db, user_id=u.id) == []


async def test_memory_edit_disable_and_reenable(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    r = await u.client.post("/api/me/memories", json={"memory_text": "Lives in Berlin"})
    mid = r.json()["id"]
    await drain(rt)
    [old] = await vectors(rt.db, memory_id=mid)
    r = await u.client.patch(f"/api/me/memories/{mid}", json={"memory_text": "Lives in Madrid"})
    assert r.status_code == 200, r.text
    assert await vectors(rt.db, memory_id=mid) == []
    await drain(rt)
    [new] = await vectors(rt.db, memory_id=mid)
    assert new["text_hash"] != old["text_hash"]
    r = await u.client.patch(f"/api/me/memories/{mid}", json={"status": "DISABLED"})
    assert r.status_code == 200, r.text
    assert await vectors(rt.db, memory_id=mid) == []
    await drain(rt)
    assert await vectors(rt.db, memory_id=mid) == []  # disabled memories get no vector
    await u.client.patch(f"/api/me/memories/{mid}", json={"status": "ACTIVE"})
    await drain(rt)
    assert len(await vectors(rt.db, memory_id=mid)) == 1


class _Synonyms(HashingEmbedder):
    """A 'semantic' test embedder: maps food words onto one feature, so a query and a memory that
    share no word are still close — what a real model does for paraphrases."""

    FOOD: ClassVar = {"vegetarian", "meat", "steak", "dinner", "cook", "food", "burger"}

    async def embed(self, texts):
        mapped = [
            " ".join("food" if w.strip("?.,!").lower() in self.FOOD else w for w in t.split())
            for t in texts
        ]
        return await super().embed(mapped)


async def test_memory_retrieval_uses_vector_similarity(app, new_user):
    rt = rt_of(app)
    s = esvc.get(rt)
    s.embedder = _Synonyms(rt.settings)
    u = await new_user()
    target = None
    for text in ["Is vegetarian", "Works as a nurse", "Has two brothers", "Plays chess weekly"]:
        r = await u.client.post("/api/me/memories", json={"memory_text": text, "importance": 3})
        if text == "Is vegetarian":
            target = r.json()["id"]
    await drain(rt)
    query = "Can you recommend a steak for dinner tonight"
    async with rt.db.read() as c:
        plain = await retrieval.candidates(c, u.id, None, query, 10**13)
    assert target not in plain[1]  # full text alone: no shared word, no relevance
    qv = await embed_query(rt, query)
    async with rt.db.read() as c:
        rows, rel = await retrieval.candidates(c, u.id, None, query, 10**13, query_vector=qv)
    assert rel[target] == max(rel.values()) and rel[target] > 0.3
    # the context source picks it up from the query cache, without embedding in the transaction
    source = rt.memory_source
    from chatmem.auth.service import principal_for_key

    principal = await principal_for_key(rt.db, u.key)
    conv = type("Conv", (), {"workspace_id": "", "agent_id": None})()
    async with rt.db.read() as c:
        got = await source(
            c,
            principal=principal,
            conv=conv,
            query=query,
            budget_tokens=100,
            count_tokens=lambda s: len(s.split()),
        )
    assert got["ids"][0] == target


class _Flaky:
    """Fails ``fails`` times (transient or permanent), then embeds like the hashing embedder."""

    def __init__(self, settings, fails: int, permanent: bool = False) -> None:
        self.inner = HashingEmbedder(settings)
        self.name, self.model = self.inner.name, self.inner.model
        self.fails, self.permanent = fails, permanent

    async def embed(self, texts):
        if self.fails:
            self.fails -= 1
            raise EmbedderError("upstream hiccup", permanent=self.permanent)
        return await self.inner.embed(texts)

    async def aclose(self):
        return None


async def test_transient_failures_retry_with_backoff(app, new_user):
    rt = rt_of(app)
    esvc.get(rt).embedder = _Flaky(rt.settings, fails=2)
    u = await new_user()
    cid = await new_conv(u)
    mid = await say(u, cid, "retry me")
    ran = await drain(rt)
    outcomes = [j["outcome"] for j in ran if j["kind"] == ejobs.KIND_CONVERSATION]
    assert outcomes == ["queued", "queued", "done"]
    assert len(await vectors(rt.db, message_id=mid)) == 1


async def test_permanent_failure_fails_the_job_with_its_reason(app, new_user):
    rt = rt_of(app)
    esvc.get(rt).embedder = _Flaky(rt.settings, fails=1, permanent=True)
    u = await new_user()
    cid = await new_conv(u)
    await say(u, cid, "no luck")
    ran = await drain(rt)
    assert [j["outcome"] for j in ran] == ["failed"]
    [job] = await job_rows(rt.db, ejobs.KIND_CONVERSATION)
    assert job["status"] == "failed" and "upstream hiccup" in job["last_error"]


async def test_wrong_vector_size_is_permanent(app, new_user):
    rt = rt_of(app)
    s = esvc.get(rt)
    s.dimensions = 3  # the operator asked for 3, the embedder answers 256
    u = await new_user()
    await say(u, await new_conv(u), "size check")
    ran = await drain(rt)
    assert [j["outcome"] for j in ran] == ["failed"]
    assert "dimensions" in (await job_rows(rt.db, ejobs.KIND_CONVERSATION))[0]["last_error"]


async def test_embed_query_never_raises(app):
    rt = rt_of(app)
    s = esvc.get(rt)
    assert await embed_query(rt, "   ") is None
    qv = await embed_query(rt, "hello world")
    assert qv.model == s.model_key and len(qv.vector) == 256
    assert await embed_query(rt, "hello   world") is qv  # cached (same clipped text)

    class Slow(HashingEmbedder):
        async def embed(self, texts):
            await asyncio.sleep(5)

    s.embedder = Slow(rt.settings)
    assert await embed_query(rt, "something new", timeout_s=0.05) is None
    s.embedder = _Flaky(rt.settings, fails=1)
    assert await embed_query(rt, "another new text") is None


async def test_no_embedder_means_no_jobs_and_no_vectors(db_url):
    from chatmem.app import create_app

    app = create_app(make_settings(db_url, run_worker=False))
    async with app.router.lifespan_context(app):
        rt = app.state.runtime
        assert esvc.get(rt) is None
        async with rt.db.write() as c:
            conv_id = (await c.execute(select(t.conversations.c.id).limit(1))).scalar()
            assert await schedule_embedding(c, conv_id or "conv_x") is None
        assert await embed_query(rt, "anything") is None
        assert await job_rows(rt.db, ejobs.KIND_CONVERSATION) == []


async def test_admin_status(app, new_user):
    rt = rt_of(app)
    admin, user = await new_user(admin=True), await new_user()
    await say(user, await new_conv(user), "count me")
    await drain(rt)
    assert (await user.client.get("/api/admin/embeddings")).status_code == 403
    r = await admin.client.get("/api/admin/embeddings")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["enabled"] and body["embedder"] == "hashing"
    assert body["model_key"] == "hashing:bow-256"
    assert {"hashing", "local", "openai"} <= set(body["installed_embedders"])
    assert {"model": "hashing:bow-256", "owner_kind": "message", "dimensions": 256, "n": 1} in (
        body["vectors"]
    )
    assert body["backends"] and all(isinstance(v, bool) for v in body["backends"].values())


async def test_backfill_queues_history_written_before_embeddings(app, new_user):
    rt = rt_of(app)
    u = await new_user()
    c1, c2 = await new_conv(u), await new_conv(u)
    m1, m2 = await say(u, c1, "old history one"), await say(u, c2, "old history two")
    await u.client.post("/api/me/memories", json={"memory_text": "Collects stamps"})
    async with rt.db.write() as c:  # as if these were written while embeddings were off
        await c.execute(delete(t.jobs))
    got = await ejobs.backfill(rt.db, page=1)
    assert got["conversations"] == 2 and got["users"] >= 1
    assert await ejobs.backfill(rt.db) == {"conversations": 0, "users": 0}  # deduplicated
    await drain(rt)
    assert {v["message_id"] for v in await vectors(rt.db, owner_kind="message")} == {m1, m2}
    assert len(await vectors(rt.db, owner_kind="memory", user_id=u.id)) == 1


def test_backfill_command(db_url):
    import os
    import subprocess
    import sys
    from pathlib import Path

    cli = str(Path(sys.executable).with_name("chatmem"))
    env = {**os.environ, "CHATMEM_DATABASE_URL": db_url, "CHATMEM_EMBEDDER": ""}
    off = subprocess.run([cli, "embeddings", "backfill"], env=env, capture_output=True, text=True)
    assert off.returncode == 1 and "CHATMEM_EMBEDDER" in off.stdout
    env["CHATMEM_EMBEDDER"] = "hashing"
    on = subprocess.run([cli, "embeddings", "backfill"], env=env, capture_output=True, text=True)
    assert on.returncode == 0, on.stderr
    assert "queued embedding for 0 conversations and 0 users (hashing:bow-256)" in on.stdout

"""Log mode end to end on SQLite and PostgreSQL: appends without generation schedule memory
extraction and compaction through one debounced job per conversation (counted in the jobs table),
extraction catches up over the whole unseen path in batches reading each message once, imported
``created_at`` dates are kept, validated and flow into the conversation's counters and into memory
validity, and the LLM extractor runs on the model the turn used."""

from __future__ import annotations

import json
import math
import uuid
from collections import Counter
from contextlib import asynccontextmanager

import httpx
import pytest
import respx
from sqlalchemy import func, select, update

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.jobs.worker import Worker
from chatmem.memory.extract import RuleExtractor
from chatmem.memory.hooks import run_extraction
from tests.conftest import make_settings

J = t.jobs.c
DAY = 86_400_000
T0 = 1_672_531_200_000  # 2023-01-01T00:00:00Z


@asynccontextmanager
async def log_app(db_url: str, **kw):
    kw.setdefault("run_worker", False)
    application = create_app(make_settings(db_url, **kw))
    async with application.router.lifespan_context(application):
        rt = application.state.runtime
        user, key = await auth_service.create_user(rt.db, f"u-{uuid.uuid4().hex[:8]}@example.com")
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=application),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        ) as c:
            c.user_id = user["id"]
            yield rt, c


async def _conv(c, **body) -> str:
    r = await c.post("/api/conversations", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def _log(c, cid, text, role="user", **extra) -> dict:
    body = {"content": text, "role": role, **extra}
    if role == "user":
        body["generate"] = False
    r = await c.post(f"/api/conversations/{cid}/messages", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def _jobs(rt) -> Counter:
    async with rt.db.read() as c:
        rows = (await c.execute(select(J.kind, J.status))).all()
    return Counter((r.kind, r.status) for r in rows)


async def _drain(rt) -> None:
    """Make every queued job due and run the worker until nothing is left."""
    async with rt.db.write() as c:
        await c.execute(update(t.jobs).where(J.status == "queued").values(run_after=0))
    w = Worker(rt)
    while await w.run_once():
        pass


async def _mems(c, **params) -> list[dict]:
    r = await c.get(
        "/api/me/memories",
        params={"status": "ACTIVE,QUERY_DEPENDENT,STALE,UNKNOWN_CURRENT,DISABLED", **params},
    )
    assert r.status_code == 200, r.text
    return r.json()["items"]


class Recorder:
    """The rule extractor, recording which message ids every batch handed it."""

    name = "recorder"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def extract(self, inp):
        self.batches.append([m.id for m in inp.messages])
        return await RuleExtractor().extract(inp)


FACTS = {
    0: "My name is Alice.",
    10: "I live in Paris.",
    150: "I moved to Berlin.",
    299: "I'm allergic to peanuts.",
}


async def test_bulk_import_is_one_job_stream_and_extraction_catches_up(db_url):
    rounds, size, per_job = 300, 20, 4
    async with log_app(
        db_url,
        log_followup_delay_ms=3_600_000,  # the window stays open for the whole import
        memory_extract_max_messages=size,
        memory_extract_batches_per_job=per_job,
    ) as (rt, c):
        rec = Recorder()
        rt.memory_extractor = lambda _rt, _conv: rec
        cid = await _conv(c)
        ids, when = [], {}
        for i in range(rounds):
            at = T0 + i * DAY
            u = await _log(c, cid, FACTS.get(i, f"Tell me about topic {i}."), created_at=at)
            a = await _log(
                c, cid, f"Topic {i} is broad. My name is Bot and I live in a server.", "assistant"
            )
            ids += [u["id"], a["id"]]
            when[u["id"]] = at
        # 600 appends: one queued job, nothing else
        assert await _jobs(rt) == Counter({("followups", "queued"): 1})
        await _drain(rt)
        batches = math.ceil(2 * rounds / size)
        assert await _jobs(rt) == Counter(
            {
                ("followups", "done"): 1,
                ("memory.extract", "done"): math.ceil(batches / per_job),
                ("compaction", "done"): 1,
            }
        )
        # every message read exactly once, oldest first, in batches of `size`
        assert [i for b in rec.batches for i in b] == ids
        assert len(rec.batches) == batches and all(len(b) <= size for b in rec.batches)
        async with rt.db.read() as conn:
            conv = (
                await conn.execute(select(t.conversations).where(t.conversations.c.id == cid))
            ).one()
        assert conv.memory_cursor == ids[-1] == conv.active_leaf_id
        assert conv.summary_blocks  # compaction ran over the imported history
        mems = {m["memory_text"]: m for m in await _mems(c)}
        assert set(mems) == {
            "User's name is Alice",
            "Lives in Paris",
            "Lives in Berlin",
            "Is allergic to peanuts",
        }  # the first message as well as the last; nothing the assistant said
        paris, berlin = mems["Lives in Paris"], mems["Lives in Berlin"]
        assert (paris["status"], berlin["status"]) == ("STALE", "ACTIVE")
        # imported dates: validity comes from when it was said, not when it was imported
        assert paris["valid_from"] == T0 + 10 * DAY and berlin["valid_from"] == T0 + 150 * DAY
        assert paris["valid_until"] == berlin["valid_from"]
        # the worker took the window: the next append opens a new one
        await _log(c, cid, "I love hiking.")
        jobs = await _jobs(rt)
        assert jobs[("followups", "queued")] == 1 and jobs[("memory.extract", "queued")] == 0
        await _drain(rt)
        assert rec.batches[-1] == [rec.batches[-1][0]] and "Loves hiking" in {
            m["memory_text"] for m in await _mems(c)
        }


async def test_many_conversations_many_windows_bounded_jobs(db_url):
    """With the worker taking windows as they close, jobs stay per window, not per message."""
    async with log_app(db_url, log_followup_delay_ms=3_600_000) as (rt, c):
        convs = [await _conv(c) for _ in range(3)]
        for n in range(40):
            for cid in convs:
                await _log(c, cid, f"Line {n}.")
        assert await _jobs(rt) == Counter({("followups", "queued"): 3})  # one per conversation
        await _drain(rt)
        jobs = await _jobs(rt)
        assert jobs[("memory.extract", "done")] == 3 and jobs[("compaction", "done")] == 3


async def test_extraction_resumes_after_the_cursor_message_is_deleted(db_url):
    async with log_app(db_url) as (rt, c):
        cid = await _conv(c)
        await _log(c, cid, "My name is Alice.")
        last = await _log(c, cid, "Hello Alice.", "assistant")
        rep = await run_extraction(rt, cid, c.user_id)
        assert rep["cursor"] == last["id"]
        r = await c.delete(f"/api/conversations/{cid}/messages/{last['id']}")
        assert r.status_code == 200, r.text
        await _log(c, cid, "I live in Rome.")
        rep = await run_extraction(rt, cid, c.user_id)
        assert rep["processed"] == 1 and rep["outcomes"] == ["created"]
        assert {m["value"] for m in await _mems(c)} == {"Alice", "Rome"}


async def test_job_reenqueues_itself_until_the_leaf(db_url):
    small = {"memory_extract_max_messages": 3, "memory_extract_batches_per_job": 2}
    async with log_app(db_url, **small) as (rt, c):
        cid = await _conv(c)
        for i in range(20):
            await _log(c, cid, f"Message {i}.")
        await _log(c, cid, "I live in Oslo.")
        rep = await run_extraction(rt, cid, c.user_id, max_batches=2)
        assert rep["processed"] == 6 and rep["more"] is True
        await _drain(rt)
        assert (await _jobs(rt))[("memory.extract", "done")] == 3  # 15 left = 5 batches
        assert [m["value"] for m in await _mems(c)] == ["Oslo"]
        assert await run_extraction(rt, cid, c.user_id) == {"processed": 0}


# ── created_at ──────────────────────────────────────────────────────────────────────────────────


async def _conv_row(rt, cid):
    async with rt.db.read() as conn:
        q = select(t.conversations).where(t.conversations.c.id == cid)
        return (await conn.execute(q)).one()


async def test_created_at_is_kept_and_counters_stay_consistent(db_url):
    async with log_app(db_url) as (rt, c):
        cid = await _conv(c)
        before = now_ms()
        m1 = await _log(c, cid, "Imported first.", created_at=T0 + 5 * DAY)
        m2 = await _log(c, cid, "An answer dated earlier.", "assistant", created_at=T0)
        m3 = await _log(c, cid, "No date: now.")
        m4 = await _log(c, cid, "Clock a little ahead.", created_at=now_ms() + 60_000)
        assert (m1["created_at"], m2["created_at"]) == (T0 + 5 * DAY, T0)
        assert before <= m3["created_at"] <= now_ms()
        page = (await c.get(f"/api/conversations/{cid}/messages")).json()
        assert [m["created_at"] for m in page["items"]][:2] == [T0 + 5 * DAY, T0]
        conv = await _conv_row(rt, cid)
        assert conv.message_count == 4 and conv.last_message_at == m4["created_at"]
        assert before <= conv.updated_at <= now_ms()
        # last_message_at never moves backwards for an older imported message…
        await _log(c, cid, "Very old.", created_at=0)
        assert (await _conv_row(rt, cid)).last_message_at == m4["created_at"]
        # …and is the newest remaining message after a delete
        r = await c.delete(f"/api/conversations/{cid}/messages/{m4['id']}")
        assert r.status_code == 200, r.text
        conv = await _conv_row(rt, cid)
        assert conv.last_message_at == m3["created_at"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"created_at": -1}, 422),
        ({"created_at": 2**63}, 422),
        ({"created_at": "1700000000000"}, 422),
        ({"created_at": 1.7e12}, 422),
        ({"created_at": True}, 422),
        ({"created_at": "future"}, 422),
        ({"generate": True, "created_at": T0}, 422),
        ({"generate": None, "created_at": T0}, 422),
    ],
)
async def test_bad_created_at_is_refused_and_nothing_is_written(db_url, extra, status):
    async with log_app(db_url) as (rt, c):
        cid = await _conv(c)
        if extra.get("created_at") == "future":
            extra = {"created_at": now_ms() + 3_600_000}
        body = {"content": "hi", "generate": False, **extra}
        r = await c.post(f"/api/conversations/{cid}/messages", json=body)
        assert r.status_code == status, r.text
        err = r.json()
        assert "created_at" in json.dumps(err)
        assert (await _conv_row(rt, cid)).message_count == 0
        async with rt.db.read() as conn:
            assert (await conn.execute(select(func.count()).select_from(t.jobs))).scalar() == 0


async def test_future_created_at_names_the_limit(db_url):
    async with log_app(db_url, max_clock_skew_ms=1_000) as (rt, c):
        cid = await _conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "hi", "generate": False, "created_at": now_ms() + 60_000},
        )
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_created_at"
        assert r.json()["error"]["details"]["max_clock_skew_ms"] == 1_000


# ── the LLM extractor runs on the model of the turn ─────────────────────────────────────────────

BASE = "http://upstream.test/v1"
EXTRACTED = {
    "memories": [
        {
            "memory_text": "Lives in Porto",
            "memory_type": "location",
            "slot": "home_location",
            "value": "Porto",
            "importance": 4,
            "confidence": 0.9,
            "status": "ACTIVE",
            "source": "m1",
        }
    ]
}


def _model(mid: str) -> dict:
    return {
        "id": mid,
        "provider": "openai",
        "upstream": f"up-{mid}",
        "options": {"base_url": BASE, "api_key": "sk-test", "max_retries": 0},
    }


def _sse(text: str) -> httpx.Response:
    chunk = {
        "id": "cc-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "x",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
    }
    body = "data: " + json.dumps(chunk) + "\n\ndata: [DONE]\n\n"
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def _upstream(request: httpx.Request) -> httpx.Response:
    sent = json.loads(request.content)
    system = sent["messages"][0]["content"] if sent["messages"] else ""
    if "extract long-term memories" in system:
        return _sse(json.dumps(EXTRACTED))
    return _sse("Porto is lovely.")


def _models_called(route, *, extraction: bool) -> list[str]:
    out = []
    for call in route.calls:
        sent = json.loads(call.request.content)
        is_extraction = "extract long-term memories" in sent["messages"][0]["content"]
        if is_extraction == extraction:
            out.append(sent["model"])
    return out


async def test_llm_extractor_uses_the_model_of_a_logged_turn(db_url):
    async with log_app(
        db_url, models=[_model("gpt-a"), _model("gpt-b")], default_model="gpt-a"
    ) as (rt, c):
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(f"{BASE}/chat/completions").mock(side_effect=_upstream)
            cid = await _conv(c, model="gpt-a")
            await _log(c, cid, "We moved to Porto.")
            await _log(c, cid, "Porto is lovely.", "assistant", model="gpt-b")
            rep = await run_extraction(rt, cid, c.user_id)
            assert rep["outcomes"] == ["created"]
            assert _models_called(route, extraction=True) == ["up-gpt-b"]
            # a model this deployment does not serve: the conversation's model instead
            await _log(c, cid, "I love the beach.")
            await _log(c, cid, "Sure.", "assistant", model="someone-elses-model")
            await run_extraction(rt, cid, c.user_id)
            assert _models_called(route, extraction=True) == ["up-gpt-b", "up-gpt-a"]


async def test_llm_extractor_uses_the_model_of_a_generated_turn(db_url):
    async with log_app(
        db_url, models=[_model("gpt-a"), _model("gpt-b")], default_model="gpt-a"
    ) as (rt, c):
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(f"{BASE}/chat/completions").mock(side_effect=_upstream)
            cid = await _conv(c, model="gpt-a")
            r = await c.post(
                f"/api/conversations/{cid}/messages",
                json={"content": "We moved to Porto.", "model": "gpt-b"},
            )
            assert r.status_code in (200, 201, 202), r.text
            mid = r.json()["assistant_message_id"]
            s = await c.get(f"/api/conversations/{cid}/messages/{mid}/stream")
            assert '"done"' in s.text or "event: done" in s.text
            assert _models_called(route, extraction=False)[0] == "up-gpt-b"
            jobs = await _jobs(rt)
            assert jobs[("memory.extract", "queued")] == 1  # a generated turn: at once, no window
            assert jobs[("followups", "queued")] == 0
            w = Worker(rt, kinds=["memory.extract"])
            while await w.run_once():
                pass
            assert _models_called(route, extraction=True) == ["up-gpt-b"]
            assert [m["value"] for m in await _mems(c)] == ["Porto"]

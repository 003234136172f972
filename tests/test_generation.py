"""Generation end to end on SQLite and PostgreSQL: send → stream → complete, resume from every
Last-Event-ID, double submits, edits, regenerate, stop, the concurrency cap, provider failure, the
sweeper, pruned logs, titles, models, and bad input (nothing written)."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import asynccontextmanager

import httpx
import pytest
from sqlalchemy import event, func, insert, select, update

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.generation import service as gen
from chatmem.generation.sse import parse
from chatmem.generation.sweeper import Sweeper
from chatmem.generation.titles import title_job
from tests.conftest import make_settings
from tests.fakes import FailingProvider, GatedProvider

MODELS = [
    {"id": "broken", "provider": "failing", "label": "Broken"},
    {
        "id": "slow",
        "provider": "gated",
        "label": "Slow",
        "price_input": 1.0,
        "price_output": 2.0,
        "price_cache_read": 0.5,
        "price_cache_write": 4.0,
        "credits_multiplier": 2.0,
    },
]


@asynccontextmanager
async def running_app(db_url: str, **kw):
    kw.setdefault("default_model", "demo")
    settings = make_settings(db_url, models=MODELS, **kw)
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        reg = application.state.runtime.providers
        reg.register("failing", FailingProvider())
        gated = GatedProvider()
        reg.register("gated", gated)
        application.state.gated = gated
        yield application


@asynccontextmanager
async def client_for(application, *, admin: bool = False):
    rt = application.state.runtime
    user, key = await auth_service.create_user(
        rt.db, f"u-{uuid.uuid4().hex[:8]}@example.com", admin=admin
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://test",
        headers={"Authorization": f"Bearer {key}"},
    ) as c:
        c.user_id = user["id"]
        yield c


async def new_conv(c) -> str:
    r = await c.post("/api/conversations", json={})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def insert_dead_turn(rt, c, cid: str, *, question: list, answer: list):
    """A question and an answer left ``streaming`` by a process that died (no sweeper ran yet):
    the answer's row."""
    from chatmem.conversations import store

    async with rt.db.write() as cx:
        conv = (await cx.execute(select(t.conversations).where(t.conversations.c.id == cid))).one()
        q = await store.insert_message(
            cx, conv, parent_id=None, role="user", blocks=question, user_id=c.user_id
        )
        return await store.insert_message(
            cx,
            conv,
            parent_id=q.id,
            role="assistant",
            blocks=answer,
            user_id=c.user_id,
            status="streaming",
        )


async def stream(c, cid, mid, after=None, via_query=False) -> list[dict]:
    headers, params = {}, {}
    if after is not None:
        if via_query:
            params["last_event_id"] = str(after)
        else:
            headers["Last-Event-ID"] = str(after)
    r = await c.get(
        f"/api/conversations/{cid}/messages/{mid}/stream", headers=headers, params=params
    )
    if r.status_code == 204:  # finished, and every event was delivered already
        assert r.content == b"" and after
        return []
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    return parse(r.text)


def deltas(events) -> str:
    return "".join(e["data"]["text"] for e in events if e["type"] == "text_delta")


async def count(db, table) -> int:
    async with db.read() as c:
        return (await c.execute(select(func.count()).select_from(table))).scalar_one()


async def until(predicate, tries: int = 500):
    for _ in range(tries):
        if await predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition never became true")


async def test_send_stream_complete(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "What is a DAG?"})
        assert r.status_code == 202, r.text
        ids = r.json()
        assert ids["stream_url"].endswith(f"/messages/{ids['assistant_message_id']}/stream")
        events = await stream(c, cid, ids["assistant_message_id"])
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events[0]["type"] == "message_start"
        assert events[0]["data"]["user_message_id"] == ids["user_message_id"]
        assert events[-2]["type"] == "usage" and events[-1]["type"] == "done", events[-1]
        assert events[-1]["data"]["stop_reason"] == "end_turn"
        text = deltas(events)
        assert 'You asked: "What is a DAG?"' in text
        assert len(text.split()) >= 40  # demo_min_tokens
        msg = (
            await c.get(f"/api/conversations/{cid}/messages/{ids['assistant_message_id']}")
        ).json()
        assert msg["status"] == "complete" and msg["text"] == text
        assert msg["parent_id"] == ids["user_message_id"]
        assert msg["provider"] == "demo" and msg["model_label"] == "Demo (offline)"
        assert msg["usage"]["output_tokens"] == len(text.split(" "))
        assert msg["usage"]["input_tokens"] > 0 and msg["usage"]["context_tokens"] > 0
        assert msg["gen_ms"] >= 0 and "cost" not in msg
        assert events[-1]["data"]["message"]["text"] == text
        assert "context" in msg["metadata"]
        conv = (await c.get(f"/api/conversations/{cid}")).json()
        assert conv["active_leaf_id"] == ids["assistant_message_id"]
        assert conv["message_count"] == 2
        async with rt.db.read() as cx:
            jobs = (await cx.execute(select(t.jobs.c.kind, t.jobs.c.payload))).all()
        kinds = sorted(j.kind for j in jobs)
        assert kinds == ["compaction", "memory.extract", "title"]
        mem = next(j.payload for j in jobs if j.kind == "memory.extract")
        assert mem == {
            "conversation_id": cid,
            "user_id": c.user_id,
            "message_id": ids["assistant_message_id"],
        }
        # the title job (run directly; the worker is someone else's) names the conversation
        assert application.state.runtime.job_handlers["title"] is title_job
        await title_job(rt, {"conversation_id": cid})
        assert (await c.get(f"/api/conversations/{cid}")).json()["title"] == "What is a DAG?"
        # a second turn does not enqueue another title
        r = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "More"},
            headers={"Accept": "text/event-stream"},
        )
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        second = parse(r.text)
        assert second[-1]["type"] == "done" and "This is message 2" in deltas(second)
        async with rt.db.read() as cx:
            n_title = (
                await cx.execute(
                    select(func.count()).select_from(t.jobs).where(t.jobs.c.kind == "title")
                )
            ).scalar_one()
        assert n_title == 1


async def test_resume_from_every_last_event_id(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "resume me"})
        mid = r.json()["assistant_message_id"]
        full = await stream(c, cid, mid)
        assert full[-1]["type"] == "done"
        n = len(full)
        for k in range(n + 1):
            got = await stream(c, cid, mid, after=k, via_query=bool(k % 2))
            assert got == full[k:], k
        # after the closing event: 204, so a standard EventSource stops reconnecting
        for via_query in (False, True):
            p = {"last_event_id": str(n)} if via_query else {}
            h = {} if via_query else {"Last-Event-ID": str(n)}
            r = await c.get(f"/api/conversations/{cid}/messages/{mid}/stream", params=p, headers=h)
            assert r.status_code == 204 and r.content == b""
        msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        assert deltas(full) == msg["text"]


async def test_live_follow_and_partial_text(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "slowly", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]

        async def flushed():
            page = (await c.get(f"/api/conversations/{cid}/messages")).json()
            last = page["items"][-1]
            return last["id"] == mid and last["status"] == "streaming" and last["text"] == "first"

        await until(flushed)  # mid-turn, the active path shows the partial text
        follower = asyncio.create_task(stream(c, cid, mid, after=1))
        py_follow = asyncio.create_task(_collect(gen.follow(rt, mid, 0)))
        await asyncio.sleep(0.05)
        application.state.gated.gate.set()
        events = await follower
        assert deltas(events) == "first second" and events[-1]["type"] == "done"
        assert next(e["seq"] for e in await py_follow) == 1
        msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        assert msg["usage"] == {
            "input_tokens": 10,
            "context_tokens": msg["usage"]["context_tokens"],
            "output_tokens": 2,
            "cache_read_tokens": 4,
            "cache_write_tokens": 1,
        }
        # cost = (10*1 + 2*2 + 4*0.5 + 1*4)/1e6 = 20e-6 USD; credits = cost*1000*2
        assert msg["credits"] == pytest.approx(0.04)
        assert msg["fast"] is False and "cost" not in msg
    async with running_app(db_url) as application, client_for(application, admin=True) as admin:
        cid = await new_conv(admin)
        application.state.gated.gate.set()
        r = await admin.post(
            f"/api/conversations/{cid}/messages", json={"content": "x", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]
        await stream(admin, cid, mid)
        msg = (await admin.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        assert msg["cost"] == pytest.approx(20e-6)


async def _collect(agen):
    return [e async for e in agen]


async def test_double_submit_edit_and_parent_streaming(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "hi", "model": "demo"}
        )
        root_answer = r.json()["assistant_message_id"]
        await stream(c, cid, root_answer)
        body = {"content": "same question", "parent_id": root_answer, "model": "slow"}
        first, second = await asyncio.gather(
            c.post(f"/api/conversations/{cid}/messages", json=body),
            c.post(f"/api/conversations/{cid}/messages", json=body),
        )
        codes = sorted([first.status_code, second.status_code])
        assert codes == [202, 409], (first.text, second.text)
        ok, dup = (first, second) if first.status_code == 202 else (second, first)
        running = ok.json()["assistant_message_id"]
        assert dup.json()["error"]["code"] == "generation_in_progress"
        assert dup.json()["error"]["details"]["message_id"] == running
        # replying under the unfinished answer (explicitly or via the active leaf) is refused
        for payload in ({"content": "next"}, {"content": "next", "parent_id": running}):
            r = await c.post(f"/api/conversations/{cid}/messages", json=payload)
            assert r.status_code == 409
            assert r.json()["error"] == {
                "code": "parent_streaming",
                "message": r.json()["error"]["message"],
                "details": {"message_id": running},
            }
        # an explicit edit (same parent, new text) proceeds as a user sibling
        r = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "edited question", "parent_id": root_answer, "model": "demo"},
        )
        assert r.status_code == 202, r.text
        edit = r.json()
        await stream(c, cid, edit["assistant_message_id"])
        user_msg = (
            await c.get(f"/api/conversations/{cid}/messages/{edit['user_message_id']}")
        ).json()
        assert user_msg["branch_count"] == 2 and user_msg["parent_id"] == root_answer
        # regenerating the running turn's question proceeds too
        r = await c.post(
            f"/api/conversations/{cid}/regenerate",
            json={"message_id": ok.json()["user_message_id"], "model": "demo"},
        )
        assert r.status_code == 202, r.text
        await stream(c, cid, r.json()["assistant_message_id"])
        application.state.gated.gate.set()
        events = await stream(c, cid, running)
        assert events[-1]["type"] == "done"
        async with rt.db.read() as cx:
            n_users = (
                await cx.execute(
                    select(func.count())
                    .select_from(t.messages)
                    .where(t.messages.c.conversation_id == cid, t.messages.c.role == "user")
                )
            ).scalar_one()
        assert n_users == 3  # hi, same question (once), edited question
        assert await count(rt.db, t.conversation_generation_leases) == 0


async def test_regenerate_adds_assistant_sibling(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "again?"})
        ids = r.json()
        await stream(c, cid, ids["assistant_message_id"])
        r = await c.post(
            f"/api/conversations/{cid}/regenerate", headers={"Accept": "text/event-stream"}
        )
        assert r.status_code == 200
        events = parse(r.text)
        assert events[0]["data"]["user_message_id"] == ids["user_message_id"]
        new_mid = events[0]["data"]["assistant_message_id"]
        assert events[-1]["type"] == "done"
        msg = (await c.get(f"/api/conversations/{cid}/messages/{new_mid}")).json()
        assert msg["parent_id"] == ids["user_message_id"]
        assert msg["branch_count"] == 2 and msg["branch_index"] == 1
        branch = ("branch_index", "branch_count", "sibling_ids")
        # the done event's message (siblings returned by the ending UPDATE) agrees with a read
        done = events[-1]["data"]["message"]
        assert {k: done[k] for k in branch} == {k: msg[k] for k in branch}
        assert msg["sibling_ids"] == [ids["assistant_message_id"], new_mid]
        assert (await c.get(f"/api/conversations/{cid}")).json()["active_leaf_id"] == new_mid
        # by the answer's id, or the question's
        for target in (ids["assistant_message_id"], ids["user_message_id"]):
            r = await c.post(
                f"/api/conversations/{cid}/regenerate",
                json={"message_id": target},
                headers={"Accept": "text/event-stream"},
            )
            done = parse(r.text)[-1]["data"]["message"]
            read = (await c.get(f"/api/conversations/{cid}/messages/{done['id']}")).json()
            assert {k: done[k] for k in branch} == {k: read[k] for k in branch}
        r = await c.get(f"/api/conversations/{cid}/messages/{new_mid}")
        assert r.json()["branch_count"] == 4
        assert done["branch_count"] == 4 and done["branch_index"] == 3


async def test_stop_keeps_partial_text(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "long", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]

        async def first_word():  # in flight with its first word (stopped before: no text)
            page = (await c.get(f"/api/conversations/{cid}/messages")).json()
            return page["items"][-1]["id"] == mid and page["items"][-1]["text"] == "first"

        await until(first_word)
        r = await c.post(f"/api/conversations/{cid}/stop", json={"message_id": mid})
        assert r.status_code == 200
        body = r.json()
        assert body["stopped"] == [mid]
        [msg] = body["messages"]
        assert msg["status"] == "complete" and msg["stop_reason"] == "stopped"
        events = await stream(c, cid, mid)
        assert events[-1]["type"] == "done" and events[-1]["data"]["stop_reason"] == "stopped"
        assert deltas(events) == msg["text"] == "first"
        # stopping again (nothing running) is a no-op; a stop with no body stops all of mine here
        r = await c.post(f"/api/conversations/{cid}/stop")
        assert r.json() == {"stopped": [], "messages": []}
        r1 = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "a", "model": "slow", "parent_id": None},
        )
        r2 = await c.post(
            f"/api/conversations/{cid}/regenerate",
            json={"message_id": r1.json()["user_message_id"], "model": "slow"},
        )
        assert r1.status_code == 202 and r2.status_code == 202, r2.text
        r = await c.post(f"/api/conversations/{cid}/stop")
        assert sorted(r.json()["stopped"]) == sorted(
            [r1.json()["assistant_message_id"], r2.json()["assistant_message_id"]]
        )
        assert {m["stop_reason"] for m in r.json()["messages"]} == {"stopped"}
        assert await count(rt.db, t.conversation_generation_leases) == 0
        async with rt.db.read() as cx:
            kinds = (await cx.execute(select(t.jobs.c.kind))).scalars().all()
        assert "memory.extract" in kinds


async def test_stop_requested_on_another_replica(db_url):
    """A stop that reaches a process not running the turn is relayed through the lease row."""
    async with (
        running_app(db_url, stop_poll_ms=20) as a,
        running_app(db_url) as b,
        client_for(a) as ca,
    ):
        rt_b = b.state.runtime
        cid = await new_conv(ca)
        r = await ca.post(
            f"/api/conversations/{cid}/messages", json={"content": "x", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]
        async with rt_b.db.read() as cx:
            row = (await cx.execute(select(t.users).where(t.users.c.id == ca.user_id))).one()
        principal = auth_service._principal(row)
        follower_b = asyncio.create_task(_collect(gen.follow(rt_b, mid, 0)))
        result = await gen.stop(rt_b, principal, cid, mid)
        assert result["messages"][0]["stop_reason"] == "stopped"
        events = await follower_b
        assert events[-1]["type"] == "done" and deltas(events) == "first"
        # the turn released its lease, stop-marked as it was (leases.release_own)
        assert await count(rt_b.db, t.conversation_generation_leases) == 0


async def test_concurrency_cap(db_url):
    async with (
        running_app(db_url, max_concurrent_turns=3) as application,
        client_for(application) as c,
        client_for(application) as other,
    ):
        rt = application.state.runtime
        mids = []
        for _ in range(3):
            cid = await new_conv(c)
            r = await c.post(
                f"/api/conversations/{cid}/messages", json={"content": "busy", "model": "slow"}
            )
            assert r.status_code == 202
            mids.append((cid, r.json()["assistant_message_id"]))
        cid = await new_conv(c)
        before = await count(rt.db, t.messages)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "one more"})
        assert r.status_code == 429
        assert r.json()["error"]["code"] == "too_many_turns"
        assert r.json()["error"]["details"] == {"limit": 3}
        assert await count(rt.db, t.messages) == before
        # another user is not affected
        ocid = await new_conv(other)
        r = await other.post(f"/api/conversations/{ocid}/messages", json={"content": "mine"})
        assert r.status_code == 202
        application.state.gated.gate.set()
        for cid_, mid in mids:
            assert (await stream(c, cid_, mid))[-1]["type"] == "done"
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "now"})
        assert r.status_code == 202


async def test_provider_failure_then_regenerate(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "break", "model": "broken"}
        )
        ids = r.json()
        events = await stream(c, cid, ids["assistant_message_id"])
        assert events[-1]["type"] == "error"
        assert events[-1]["data"] == {"code": "upstream_error", "message": "upstream exploded"}
        assert "done" not in [e["type"] for e in events]
        msg = (
            await c.get(f"/api/conversations/{cid}/messages/{ids['assistant_message_id']}")
        ).json()
        assert msg["status"] == "error" and msg["error"] == "upstream exploded"
        assert msg["text"] == "partial answer" == deltas(events)
        user = (await c.get(f"/api/conversations/{cid}/messages/{ids['user_message_id']}")).json()
        assert user["status"] == "complete"
        async with rt.db.read() as cx:
            kinds = (await cx.execute(select(t.jobs.c.kind))).scalars().all()
        assert kinds == []  # nothing to learn from a failed turn
        r = await c.post(f"/api/conversations/{cid}/regenerate", json={"model": "demo"})
        assert r.status_code == 202
        events = await stream(c, cid, r.json()["assistant_message_id"])
        assert events[-1]["type"] == "done"
        assert r.json()["user_message_id"] == ids["user_message_id"]


async def test_sweeper_ends_orphaned_turns_and_prunes(db_url):
    async with (
        running_app(db_url, sweep_interval_s=3600, event_retention_s=0) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "orphan"})
        done_mid = r.json()["assistant_message_id"]
        await stream(c, cid, done_mid)
        # a turn whose process died: a streaming row, two flushed deltas, an expired lease
        async with rt.db.write() as cx:
            conv = (
                await cx.execute(select(t.conversations).where(t.conversations.c.id == cid))
            ).one()
            from chatmem.conversations import store

            row = await store.insert_message(
                cx,
                conv,
                parent_id=done_mid,
                role="user",
                blocks=[{"kind": "text", "text": "q"}],
                user_id=c.user_id,
            )
            dead = await store.insert_message(
                cx,
                conv,
                parent_id=row.id,
                role="assistant",
                blocks=[{"kind": "text", "text": "half an"}],
                user_id=c.user_id,
                status="streaming",
            )
            await cx.execute(
                insert(t.stream_events),
                [
                    {
                        "message_id": dead.id,
                        "seq": i + 1,
                        "type": ty,
                        "data": d,
                        "created_at": now_ms(),
                    }
                    for i, (ty, d) in enumerate(
                        [
                            ("message_start", {}),
                            ("text_delta", {"text": "half"}),
                            ("text_delta", {"text": " an"}),
                        ]
                    )
                ],
            )
            await cx.execute(
                insert(t.conversation_generation_leases).values(
                    conversation_id=cid,
                    branch_key=row.id,
                    principal_id=c.user_id,
                    owner_token=f"{dead.id}:secret",
                    expires_at=now_ms() - 1,
                )
            )
        follower = asyncio.create_task(stream(c, cid, dead.id, after=2))
        await asyncio.sleep(0.05)
        ended = await Sweeper(rt).sweep_once()
        assert ended == [dead.id]
        tail = await follower
        assert [e["type"] for e in tail] == ["text_delta", "error"], tail
        assert tail[-1]["data"]["code"] == "generation_interrupted"
        msg = (await c.get(f"/api/conversations/{cid}/messages/{dead.id}")).json()
        assert msg["status"] == "error" and msg["error"] == "generation_interrupted"
        assert msg["text"] == "half an"
        assert await count(rt.db, t.conversation_generation_leases) == 0
        assert await Sweeper(rt).sweep_once() == []
        # retention 0: the finished logs are pruned → a resume gets snapshot + done / error
        await asyncio.sleep(0.01)
        assert await Sweeper(rt).prune_once() > 0
        assert await count(rt.db, t.stream_events) == 0
        events = await stream(c, cid, done_mid, after=3)
        assert [e["type"] for e in events] == ["snapshot", "done"]
        assert all(e["seq"] is None for e in events)
        assert events[0]["data"]["message"]["id"] == done_mid
        events = await stream(c, cid, dead.id)
        assert [e["type"] for e in events] == ["snapshot", "error"]


async def test_bad_input_writes_nothing(db_url):
    async with (
        running_app(db_url) as application,
        client_for(application) as c,
        client_for(application) as other,
    ):
        rt = application.state.runtime
        cid = await new_conv(c)
        base = await count(rt.db, t.messages)
        cases = [
            ({"content": "x", "model": "gpt-nonexistent"}, 422, "unknown_model"),
            ({"content": "x", "parent_id": "msg_nope"}, 422, "invalid_parent"),
            ({"content": []}, 422, "validation_error"),
            ({"content": "x", "bogus": 1}, 422, "validation_error"),
            ({"content": "x" * 300_000}, 413, "payload_too_large"),
        ]
        for body, status, code in cases:
            r = await c.post(f"/api/conversations/{cid}/messages", json=body)
            assert r.status_code == status, (body, r.text)
            assert r.json()["error"]["code"] == code
        r = await other.post(f"/api/conversations/{cid}/messages", json={"content": "x"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        r = await other.post(f"/api/conversations/{cid}/regenerate", json={})
        assert r.status_code == 404
        r = await other.post(f"/api/conversations/{cid}/stop", json={})
        assert r.status_code == 404
        r = await c.post(f"/api/conversations/{cid}/regenerate", json={})
        assert r.status_code == 422 and r.json()["error"]["code"] == "nothing_to_regenerate"
        r = await c.post(f"/api/conversations/{cid}/regenerate", json={"message_id": "msg_nope"})
        assert r.status_code == 422 and r.json()["error"] == {
            "code": "invalid_message",
            "message": "message not found in this conversation",
            "details": {"message_id": "msg_nope"},
        }
        assert await count(rt.db, t.messages) == base
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "ok"})
        mid = r.json()["assistant_message_id"]
        await stream(c, cid, mid)
        r = await other.get(f"/api/conversations/{cid}/messages/{mid}/stream")
        assert r.status_code == 404
        r = await c.get(
            f"/api/conversations/{cid}/messages/{mid}/stream", headers={"Last-Event-ID": "abc"}
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_last_event_id"
        r = await c.post(f"/api/conversations/{cid}/stop", json={"message_id": "msg_nope"})
        assert r.status_code == 404
        r = await c.post(f"/api/conversations/{cid}/regenerate", json={"message_id": "msg_nope"})
        assert r.status_code == 422


async def test_models_and_fast_alias(db_url):
    async with (
        running_app(db_url, fast_model="slow") as application,
        client_for(application) as c,
        client_for(application, admin=True) as admin,
    ):
        application.state.gated.gate.set()
        r = await c.get("/api/models")
        assert r.status_code == 200
        items = {m["id"]: m for m in r.json()["items"]}
        assert set(items) == {"fast", "demo", "broken", "slow"}
        assert items["fast"]["provider"] == "" and items["fast"]["fast"] is True
        assert items["demo"]["default"] is True and "prices" not in items["demo"]
        r = await admin.get("/api/models")
        assert {m["id"]: m for m in r.json()["items"]}["slow"]["prices"]["output"] == 2.0
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "q", "model": "fast"}
        )
        mid = r.json()["assistant_message_id"]
        events = await stream(c, cid, mid)
        assert events[0]["data"]["model"] == "fast" and events[0]["data"]["model_label"] == "Fast"
        msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        assert (
            msg["fast"] is True and msg["provider"] == msg["model_id"] == msg["model_label"] == ""
        )
        assert "Slow" not in r.text + str(events)
        r = await c.get("/api/models", headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401


async def test_before_turn_hook_and_python_api(db_url):
    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        seen = []

        async def hook(rt_, principal, conv_id, user_message_id, **_):
            seen.append((principal.id, conv_id, user_message_id))

        rt.before_turn = hook
        cid = await new_conv(c)
        async with rt.db.read() as cx:
            row = (await cx.execute(select(t.users).where(t.users.c.id == c.user_id))).one()
        p = auth_service._principal(row)
        user_mid, asst_mid = await gen.start_turn(rt, p, cid, [{"kind": "text", "text": "py"}])
        events = [e async for e in gen.follow(rt, asst_mid)]
        assert events[-1]["type"] == "done" and seen == [(c.user_id, cid, user_mid)]
        assert [e async for e in gen.follow(rt, asst_mid, events[-1]["seq"])] == []


async def test_resume_after_a_crash_when_the_client_saw_unsaved_events(db_url):
    """Events a dead process streamed but never flushed share numbers with the sweeper's closing
    event; a client resuming from any of them gets the saved message and the error, never a hang."""
    async with (
        running_app(db_url, sweep_interval_s=3600) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        cid = await new_conv(c)
        dead = await insert_dead_turn(
            rt,
            c,
            cid,
            question=[{"kind": "text", "text": "q"}],
            answer=[{"kind": "text", "text": "saved"}],
        )
        async with rt.db.write() as cx:
            await cx.execute(
                insert(t.stream_events),
                [
                    {
                        "message_id": dead.id,
                        "seq": 1,
                        "type": "message_start",
                        "data": {},
                        "created_at": now_ms(),
                    },
                    {
                        "message_id": dead.id,
                        "seq": 2,
                        "type": "text_delta",
                        "data": {"text": "saved"},
                        "created_at": now_ms(),
                    },
                ],
            )
        assert await Sweeper(rt).sweep_once() == [dead.id]
        full = await stream(c, cid, dead.id)
        assert [e["type"] for e in full] == ["message_start", "text_delta", "error"]
        assert full[-1]["data"]["recovered"] is True
        # the client had seen unsaved deltas 3, 4 and 5 from the dead process
        for after in (3, 4, 5):
            tail = await stream(c, cid, dead.id, after=after)
            assert [e["type"] for e in tail] == ["snapshot", "error"]
            assert tail[0]["data"]["message"]["text"] == "saved"
            assert tail[1]["data"]["code"] == "generation_interrupted"
        assert [e["type"] for e in await stream(c, cid, dead.id, after=2)] == ["error"]


async def test_sse_body_pings_while_waiting(db_url):
    from chatmem.generation.routes import sse_body

    async with (
        running_app(db_url, ping_interval_s=0.01) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "x", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]
        body = sse_body(rt, mid, 0)
        chunks = []
        async for chunk in body:
            chunks.append(chunk)
            if chunk == ": ping\n\n":
                application.state.gated.gate.set()
        text = "".join(chunks)
        assert ": ping\n\n" in chunks
        events = parse(text)
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "done"
        assert deltas(events) == "first second"
        # the first frame with an event is message_start (stored with the first flush: a ping
        # every 10 ms may come before it)
        first = text.replace(": ping\n\n", "")
        assert first.startswith("id: 1\nevent: message_start\ndata: {")


async def test_a_turns_rows_get_the_jump_pointers_of_one_by_one_inserts(db_url):
    """start_turn writes the question and its placeholder in one INSERT, their jump pointers
    computed from the parent's (dag.chain_places): they equal what inserting them one by one
    gives (dag.fill_jumps over the chain) at every depth, odd and even parents alike."""
    from chatmem.conversations import dag

    async with running_app(db_url) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        for i in range(12):
            if i % 3 == 1:  # a logged message shifts the next turn's parent depth by one
                body = {"content": f"log {i}", "role": "user", "generate": False}
                assert (await c.post(f"/api/conversations/{cid}/messages", json=body)).is_success
            r = await c.post(f"/api/conversations/{cid}/messages", json={"content": f"q{i}"})
            await stream(c, cid, r.json()["assistant_message_id"])
        cols = ("id", "parent_id", "depth", "jump_id", "jump_depth")
        async with rt.db.read() as cx:
            q = select(*(t.messages.c[k] for k in cols)).where(t.messages.c.conversation_id == cid)
            stored = sorted(
                (dict(r._mapping) for r in (await cx.execute(q)).all()), key=lambda r: r["depth"]
            )
        assert [r["depth"] for r in stored] == list(range(len(stored))) and len(stored) == 28
        expected = [{**r, "jump_id": None, "jump_depth": None} for r in stored]
        dag.fill_jumps(expected)
        assert [(r["jump_id"], r["jump_depth"]) for r in stored] == [
            (r["jump_id"], r["jump_depth"]) for r in expected
        ]


async def test_an_idle_flusher_sleeps_until_it_is_poked(db_url):
    """With no turn running nothing can be pending: the flusher waits for the first event's
    poke, not for its ``flush_interval_ms`` timer (an idle process woke four times a second to
    find nothing); a poke still wakes it at once, and turns stream as before."""
    async with (
        running_app(db_url, run_worker=False) as application,
        client_for(application) as c,
    ):
        flusher = application.state.runtime.generation.flusher
        calls: list[int] = []
        flush_all = flusher.flush_all

        async def counted() -> int:
            calls.append(1)
            return await flush_all()

        flusher.flush_all = counted
        await asyncio.sleep(1.0)  # four idle timeouts of 250 ms
        assert calls == []
        flusher.poke()

        async def flushed() -> bool:
            return bool(calls)

        await until(flushed)
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "hi"})
        events = await stream(c, cid, r.json()["assistant_message_id"])
        assert events[-1]["type"] == "done" and "hi" in deltas(events)


async def test_one_flush_tells_each_running_turn_whether_its_row_still_streams(db_url):
    """A flush of turns whose rows get no new blocks holds them all in one statement
    (``store.hold_streaming``, a statement per turn before): a turn whose row was ended elsewhere
    meanwhile (swept by another replica) is stopped as lost and its new events are not written;
    the other turns' events are, and those turns go on to ``done``."""
    # a long flush_interval: the rows' partial blocks were written by the first flush, so the
    # next one rewrites none and takes the one-statement path for all three turns
    async with (
        running_app(db_url, run_worker=False, flush_interval_ms=5000) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        g = rt.generation
        turns = []
        for _ in range(3):
            cid = await new_conv(c)
            r = await c.post(
                f"/api/conversations/{cid}/messages", json={"content": "hi", "model": "slow"}
            )
            turns.append((cid, r.json()["assistant_message_id"]))
        runners = {mid: g.runners[mid] for _, mid in turns}

        async def waiting_at_the_gate() -> bool:  # "first" streamed and stored
            return all(r.text and not r.live.pending() for r in runners.values())

        await until(waiting_at_the_gate)
        swept = turns[0][1]
        async with rt.db.write() as cx:
            await cx.execute(
                update(t.messages)
                .where(t.messages.c.id == swept)
                .values(status="error", error="generation_interrupted")
            )
        touches: list[str] = []

        def seen(_conn, _cursor, statement, *_args) -> None:
            if statement.startswith("UPDATE messages SET status=messages.status"):
                touches.append(statement)

        event.listen(rt.db.engine.sync_engine, "before_cursor_execute", seen)
        for runner in runners.values():
            runner.live.add_text("text_delta", " more")  # pokes the flusher

        async def flushed() -> bool:
            return all(
                not r.live.pending()
                for r in runners.values()
                if r.spec.assistant_message_id != swept
            )

        await until(flushed)
        event.remove(rt.db.engine.sync_engine, "before_cursor_execute", seen)
        assert len(touches) == 1  # the three rows in one statement
        assert runners[swept].stop_cause == "lost"
        assert [runners[mid].stop_cause for _, mid in turns[1:]] == [None, None]
        async with rt.db.read() as cx:
            stored = (
                (
                    await cx.execute(
                        select(t.stream_events.c.message_id).where(
                            t.stream_events.c.data["text"].as_string() == " more"
                        )
                    )
                )
                .scalars()
                .all()
            )
        assert sorted(stored) == sorted(mid for _, mid in turns[1:])
        application.state.gated.gate.set()
        for cid, mid in turns[1:]:
            events = await stream(c, cid, mid)
            assert events[-1]["type"] == "done" and deltas(events) == "first more second"
        msg = (await c.get(f"/api/conversations/{turns[0][0]}/messages/{swept}")).json()
        assert msg["status"] == "error" and msg["error"] == "generation_interrupted"

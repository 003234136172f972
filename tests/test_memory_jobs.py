"""The memory.extract job and the before-turn chat commands, on SQLite and PostgreSQL: active path
since the cursor, each message once, user text only, scope, consent, caps, remember/forget."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy import func, insert, select, update

from chatmem.auth.service import principal_for_key
from chatmem.conversations import tree_store
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id
from chatmem.jobs.queue import enqueue
from chatmem.memory.hooks import run_extraction, unseen_ids


async def _conv(u, **body) -> str:
    r = await u.client.post("/api/conversations", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def _say(u, cid, text, role="user", parent_id=None) -> str:
    body = {"content": text, "role": role, "generate": False}
    if parent_id:
        body["parent_id"] = parent_id
    r = await u.client.post(f"/api/conversations/{cid}/messages", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def _mems(u, **params) -> list[dict]:
    r = await u.client.get(
        "/api/me/memories",
        params={"status": "ACTIVE,QUERY_DEPENDENT,STALE,UNKNOWN_CURRENT,DISABLED", **params},
    )
    return r.json()["items"]


async def _n_events(app) -> int:
    async with app.state.runtime.db.read() as c:
        return (await c.execute(select(func.count()).select_from(t.memory_events))).scalar()


async def _agent(app, user_id: str, name="Mira") -> str:
    aid = new_id("agt")
    now = now_ms()
    async with app.state.runtime.db.write() as c:
        await c.execute(
            insert(t.agents).values(
                id=aid,
                user_id=user_id,
                name=name,
                handle=name.lower(),
                created_at=now,
                updated_at=now,
            )
        )
    return aid


async def test_job_handler_extracts_once_and_moves_the_cursor(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    u1 = await _say(a, cid, "My name is Alice and I live in Paris.")
    a1 = await _say(
        a, cid, "Nice to meet you, Alice! My name is Bot and I live in a server.", "assistant"
    )
    await rt.job_handlers["memory.extract"](
        rt, {"conversation_id": cid, "user_id": a.id, "message_id": a1}
    )
    mems = await _mems(a)
    assert {(m["slot"], m["value"], m["status"]) for m in mems} == {
        ("name", "Alice", "ACTIVE"),
        ("home_location", "Paris", "ACTIVE"),
    }  # nothing from the assistant
    assert all(m["source_message_ids"] == [u1] for m in mems)
    async with rt.db.read() as c:
        assert (
            await c.execute(
                select(t.conversations.c.memory_cursor).where(t.conversations.c.id == cid)
            )
        ).scalar() == a1
    events = await _n_events(app)
    again = await run_extraction(rt, cid, a.id)
    assert again == {"processed": 0} and await _n_events(app) == events


async def test_regeneration_does_not_reextract_and_an_edit_does(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    u1 = await _say(a, cid, "My name is Alice and I live in Paris.")
    await _say(a, cid, "Hello Alice.", "assistant")
    await run_extraction(rt, cid, a.id)
    events = await _n_events(app)
    # regenerate: a new assistant sibling under the same user message
    a1b = await _say(a, cid, "Hi Alice from Paris!", "assistant", parent_id=u1)
    rep = await run_extraction(rt, cid, a.id)
    assert rep["processed"] == 1 and rep["outcomes"] == [] and await _n_events(app) == events
    await _say(a, cid, "What's new?")
    await run_extraction(rt, cid, a.id)
    # edit-and-resend: a new user sibling of that question — new text, extracted
    await _say(a, cid, "I moved to Berlin.", parent_id=a1b)
    rep = await run_extraction(rt, cid, a.id)
    assert rep["processed"] == 1
    locs = {m["value"]: m for m in await _mems(a, slot="home_location")}
    assert locs["Paris"]["status"] == "STALE" and locs["Berlin"]["status"] == "ACTIVE"
    assert locs["Paris"]["superseded_by"] == [locs["Berlin"]["id"]]
    # switching back to the old branch does not re-extract what was seen there
    events = await _n_events(app)
    r = await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": u1})
    assert r.status_code == 200, r.text
    await _say(a, cid, "What's the weather like?")
    await run_extraction(rt, cid, a.id)
    assert await _n_events(app) == events
    assert {m["value"]: m["status"] for m in await _mems(a, slot="home_location")} == {
        "Paris": "STALE",
        "Berlin": "ACTIVE",
    }


async def test_streaming_message_stops_the_cursor(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    u1 = await _say(a, cid, "I love hiking.")
    a1 = await _say(a, cid, "Great", "assistant")
    async with rt.db.write() as c:
        await c.execute(update(t.messages).where(t.messages.c.id == a1).values(status="streaming"))
    rep = await run_extraction(rt, cid, a.id)
    assert rep["cursor"] == u1 and rep["processed"] == 1
    async with rt.db.write() as c:
        await c.execute(update(t.messages).where(t.messages.c.id == a1).values(status="complete"))
    rep = await run_extraction(rt, cid, a.id)
    assert rep["cursor"] == a1 and rep["processed"] == 1 and rep["outcomes"] == []


async def test_workspace_conversations_neither_write_nor_read(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    await _say(a, cid, "My name is Alice.")
    # the user's own workspace (workspace rows are seen by members only)
    wid = (await a.client.post("/api/workspaces", json={"name": "W"})).json()["id"]
    async with rt.db.write() as c:
        await c.execute(
            update(t.conversations).where(t.conversations.c.id == cid).values(workspace_id=wid)
        )
    assert (await run_extraction(rt, cid, a.id))["skipped"] == "workspace conversation"
    assert await _mems(a) == []
    p = await principal_for_key(rt.db, a.key)
    done = await rt.before_turn(rt, p, cid, (await _say(a, cid, "Remember that I'm vegan")))
    assert done.get("skipped") == "workspace conversation" and await _mems(a) == []


async def test_user_consent_is_checked_before_writing(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    await _say(a, cid, "My name is Alice.")
    await a.client.patch("/api/me", json={"memory_enabled": False})
    rep = await run_extraction(rt, cid, a.id)
    assert rep["outcomes"] == [] and await _mems(a) == []
    await a.client.patch("/api/me", json={"memory_enabled": True})
    # what was said while memory was off is not learnt later
    assert (await run_extraction(rt, cid, a.id)) == {"processed": 0}
    await _say(a, cid, "I live in Rome.")
    await run_extraction(rt, cid, a.id)
    assert [m["value"] for m in await _mems(a)] == ["Rome"]


async def test_admin_switch_off_writes_nothing(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    await _say(a, cid, "My name is Alice.")
    rt.settings.memory_enabled = False
    try:
        await run_extraction(rt, cid, a.id)
        p = await principal_for_key(rt.db, a.key)
        done = await rt.before_turn(rt, p, cid, await _say(a, cid, "remember I'm vegan"))
        assert done["remembered"] == []
    finally:
        rt.settings.memory_enabled = True
    assert await _mems(a) == []


async def test_per_turn_cap_native_and_agent(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    text = (
        "My name is Alice. I live in Paris. I love hiking. I hate cilantro. I'm allergic to "
        "peanuts. I work at Acme. I speak fluent Japanese. My birthday is May 1."
    )
    cid = await _conv(a)
    await _say(a, cid, text)
    await run_extraction(rt, cid, a.id)
    assert len(await _mems(a, agent_id="none")) == 5
    aid = await _agent(app, a.id)
    cid2 = await _conv(a, agent_id=aid)
    await _say(a, cid2, "以后回复我尽量直接一点。我讨厌香菜。我住在上海。我喜欢爬山。")
    await run_extraction(rt, cid2, a.id)
    agent_mems = await _mems(a, agent_id=aid)
    assert len(agent_mems) == 2
    assert all(
        m["agent_id"] == aid
        and m["memory_type"] in {"偏好", "边界", "关系目标", "对话风格", "重要事实"}
        for m in agent_mems
    )


async def test_remember_and_forget_in_chat(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    p = await principal_for_key(rt.db, a.key)
    hook = rt.before_turn
    cid = await _conv(a)
    await _say(a, cid, "I live in Paris.")
    await run_extraction(rt, cid, a.id)
    m1 = await _say(a, cid, "Remember that I moved to Lisbon.")
    done = await hook(rt, p, cid, m1)
    [lisbon] = done["remembered"]
    got = {m["value"]: m for m in await _mems(a, slot="home_location")}
    assert got["Lisbon"]["origin"] == "user" and got["Lisbon"]["status"] == "ACTIVE"
    assert got["Lisbon"]["importance"] == 5 and got["Paris"]["status"] == "STALE"
    m2 = await _say(a, cid, "remember my locker code is 4711")
    [code] = (await hook(rt, p, cid, m2))["remembered"]
    r = await a.client.get(f"/api/me/memories/{code}")
    assert r.json()["memory_text"] == "My locker code is 4711"
    # the job later sees both command messages: nothing doubles
    events = await _n_events(app)
    await run_extraction(rt, cid, a.id)
    assert await _n_events(app) == events
    m3 = await _say(a, cid, "Forget where I live.")
    done = await hook(rt, p, cid, m3)
    assert done["forgotten"] == [lisbon]
    assert (await a.client.get(f"/api/me/memories/{lisbon}")).json()["status"] == "DISABLED"
    # …and the forget message itself teaches nothing
    await run_extraction(rt, cid, a.id)
    assert (await a.client.get(f"/api/me/memories/{lisbon}")).json()["status"] == "DISABLED"
    m4 = await _say(a, cid, "记住我不吃香菜")
    [zh] = (await hook(rt, p, cid, m4))["remembered"]
    assert (await a.client.get(f"/api/me/memories/{zh}")).json()["memory_text"] == "用户不吃香菜"
    m5 = await _say(a, cid, "忘记我不吃香菜这件事")
    assert (await hook(rt, p, cid, m5))["forgotten"] == [zh]
    plain = await _say(a, cid, "Just chatting.")
    assert await hook(rt, p, cid, plain) == {"remembered": [], "forgotten": []}


async def test_worker_runs_the_enqueued_job(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    mid = await _say(a, cid, "I'm based in Lisbon.")
    async with rt.db.write() as c:
        await enqueue(
            c,
            "memory.extract",
            {"conversation_id": cid, "user_id": a.id, "message_id": mid},
            dedupe_key=f"memory:{cid}",
        )
    for _ in range(200):
        async with rt.db.read() as c:
            st = (
                await c.execute(select(t.jobs.c.status).where(t.jobs.c.kind == "memory.extract"))
            ).scalar()
        if st in ("done", "failed"):
            break
        await asyncio.sleep(0.05)
    assert st == "done"
    assert [m["value"] for m in await _mems(a)] == ["Lisbon"]


class ScriptedProvider:
    """A providers/base.py Provider answering every call with the next scripted text."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts = []

    async def stream(self, model, messages, *, max_tokens):
        from chatmem.providers.base import Finish, TextDelta

        self.prompts.append(messages)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        yield TextDelta(answer)
        yield Finish()


async def test_llm_extractor_runs_in_the_job_for_a_real_model(db_url):
    import json

    import httpx

    from chatmem.app import create_app
    from chatmem.auth import service as auth_service
    from chatmem.providers.base import ProviderError
    from tests.conftest import make_settings

    settings = make_settings(
        db_url,
        models=[{"id": "llm-1", "provider": "scripted"}],
        default_model="demo",
        run_worker=False,
    )
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        rt = application.state.runtime
        good = json.dumps(
            {
                "memories": [
                    {
                        "memory_text": "Lives in Berlin",
                        "memory_type": "location",
                        "slot": "home_location",
                        "value": "Berlin",
                        "importance": 4,
                        "confidence": 0.9,
                        "status": "ACTIVE",
                        "source": "m1",
                    },
                    {
                        "memory_text": "The assistant is called Bot",
                        "memory_type": "identity",
                        "source": "m2",
                    },
                    {
                        "memory_text": "Likes rain",
                        "memory_type": "preference",
                        "source": "m1",
                        "same_as": 7,
                    },
                ]
            }
        )
        provider = ScriptedProvider([good, ProviderError("down")])
        rt.providers.register("scripted", provider)
        user, key = await auth_service.create_user(rt.db, "llm@example.com")
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=application),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        ) as client:

            class U:
                pass

            a = U()
            a.client, a.id = client, user["id"]
            cid = await _conv(a, model="llm-1")
            await _say(a, cid, "We finally moved to Berlin!")
            await _say(a, cid, "Congratulations! I'm Bot.", "assistant")
            rep = await run_extraction(rt, cid, a.id)
            assert rep["outcomes"] == ["created"] and rep["rejected"] == 2
            [m] = await _mems(a)
            assert (m["slot"], m["value"], m["origin"]) == ("home_location", "Berlin", "extracted")
            day = datetime.now(UTC).strftime("%Y-%m-%d")  # each message is shown with its date
            assert f"m1 user [{day}" in provider.prompts[0][1].content
            assert "]: We finally moved to Berlin!" in provider.prompts[0][1].content
            # the model fails next time: the rule extractor still runs
            await _say(a, cid, "I love hiking.")
            rep = await run_extraction(rt, cid, a.id)
            assert rep["outcomes"] == ["created"]
            assert {x["memory_text"] for x in await _mems(a)} == {"Lives in Berlin", "Loves hiking"}


async def test_concurrent_runs_write_each_fact_once(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    await _say(a, cid, "My name is Alice and I live in Paris.")
    reps = await asyncio.gather(*(run_extraction(rt, cid, a.id) for _ in range(4)))
    assert sum(len(r.get("outcomes", [])) for r in reps) == 2
    mems = await _mems(a)
    assert sorted(m["value"] for m in mems) == ["Alice", "Paris"]
    assert await _n_events(app) == 2
    # a chat "remember" racing an extraction of the same slot still leaves one ACTIVE row
    await _say(a, cid, "I moved to Rome.")
    p = await principal_for_key(rt.db, a.key)
    m2 = await _say(a, cid, "Remember that I live in Oslo.")
    await asyncio.gather(run_extraction(rt, cid, a.id), rt.before_turn(rt, p, cid, m2))
    active = await _mems(a, slot="home_location", status="ACTIVE")
    assert len([m for m in active if m["status"] == "ACTIVE"]) == 1


async def test_unseen_span_after_a_round_deletion_that_skips_positions(app, new_user):
    """A round deleted between the cursor and the leaf leaves the positions below it skipping
    (docs/data-model.md, depth): the unseen span is still exactly the messages after the
    cursor, found by walking up to the cursor's position (not by counting depths)."""
    rt = app.state.runtime
    a = await new_user()
    cid = await _conv(a)
    await _say(a, cid, "q1")
    a1 = await _say(a, cid, "a1", "assistant")
    q2 = await _say(a, cid, "q2")
    await _say(a, cid, "a2", "assistant")
    q3 = await _say(a, cid, "q3")
    a3 = await _say(a, cid, "a3", "assistant")
    convs = t.conversations.c
    async with rt.db.write() as c:
        await c.execute(update(t.conversations).where(convs.id == cid).values(memory_cursor=a1))
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{q2}")
    assert r.status_code == 200, r.text
    async with rt.db.read() as c:
        conv = (await c.execute(select(t.conversations).where(convs.id == cid))).one()
        assert await unseen_ids(c, conv, 10) == [q3, a3]
        assert await unseen_ids(c, conv, 1) == [q3]
        # the fast path itself: the walk from the leaf stops at the cursor's position (1)
        assert await tree_store.path_oldest_ids(c, cid, a3, 1, 2) == [a1, q3]
        assert await tree_store.path_oldest_ids(c, cid, a3, -1, 10) == [
            *(await tree_store.path_ids(c, cid, a3, 10))
        ]

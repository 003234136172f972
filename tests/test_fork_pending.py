"""A fork answers before its rows are copied (conversations/forks.py), on SQLite and PostgreSQL.

The fork is held pending here (no copy beside the request, no job worker) so each rule can be
watched: what a pending fork shows is exactly what its copy shows; every other read, every write
to it and every change to its source copies it first; the source cannot be deleted under it; the
queued job copies it when the process that forked did not; two copiers copy once.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from chatmem.auth.models import Principal
from chatmem.conversations import fork_store, forks, service, store
from chatmem.conversations.forks import ForkPending
from chatmem.conversations.wire import ForkIn
from chatmem.db import schema as t

from .port_support import client_for, port_app
from .test_compat_support import insert_agent, insert_messages
from .tree_api import path, say, texts

M = t.messages.c
C = t.conversations.c


@pytest.fixture
async def held(db_url, tmp_path, monkeypatch):
    """(app, client, user id): an app without a job worker whose forks stay pending until
    something copies them."""
    monkeypatch.setattr(forks, "kick", lambda db, cid: None)
    async with port_app(db_url, tmp_path) as application:
        async with client_for(application, email="fork@example.com") as client:
            yield application, client, client.user_id


async def _stored(app, cid: str) -> int:
    async with app.state.runtime.db.read() as c:
        q = select(func.count()).select_from(t.messages).where(M.conversation_id == cid)
        return (await c.execute(q)).scalar_one()


async def _pending(app, cid: str) -> bool:
    async with app.state.runtime.db.read() as c:
        q = select(C.fork_source_id).where(C.id == cid)
        return (await c.execute(q)).scalar_one() is not None


async def _source(client, n: int = 12) -> tuple[str, list[dict]]:
    """A conversation of ``n`` messages whose path skips positions (a round deleted) and has a
    side branch: what a copy must map faithfully."""
    cid = (await client.post("/api/conversations", json={"title": "src"})).json()["id"]
    made = [await say(client, cid, f"m{i}", role=("user", "assistant")[i % 2]) for i in range(n)]
    await say(client, cid, "side", role="assistant", parent=made[2]["id"])
    r = await client.patch(
        f"/api/conversations/{cid}/active-leaf", json={"leaf_id": made[-1]["id"]}
    )
    assert r.status_code == 200, r.text
    r = await client.delete(f"/api/conversations/{cid}/messages/{made[4]['id']}")
    assert r.status_code == 200, r.text
    return cid, made


async def _fork(client, cid: str, **body) -> dict:
    r = await client.post(f"/api/conversations/{cid}/fork", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def _read(client, cid: str, limit: int) -> tuple[dict, dict]:
    conv = await client.get(f"/api/conversations/{cid}")
    page = await client.get(f"/api/conversations/{cid}/messages", params={"limit": limit})
    assert conv.status_code == page.status_code == 200, (conv.text, page.text)
    return conv.json(), page.json()


async def test_a_pending_fork_reads_exactly_as_its_copy(held):
    app, client, _uid = held
    cid, made = await _source(client)
    whole = await _fork(client, cid)
    upto = await _fork(client, cid, message_id=made[8]["id"], title="early")
    for fork in (whole, upto):
        assert await _pending(app, fork["id"]) and await _stored(app, fork["id"]) == 0
        before = {n: await _read(client, fork["id"], n) for n in (1, 3, 50)}
        assert await forks.settle(app.state.runtime.db, fork["id"])
        assert not await _pending(app, fork["id"])
        after = {n: await _read(client, fork["id"], n) for n in (1, 3, 50)}
        assert before == after  # ids, parents, depths, branch info, counters, cursor: all equal
        assert fork == after[50][0]  # the fork's own answer too
    assert texts(await path(client, whole["id"])) == [
        f"m{i}" for i in (0, 1, 2, 3, 6, 7, 8, 9, 10, 11)
    ]
    assert upto["message_count"] == 7 and upto["title"] == "early"
    assert not await forks.settle(app.state.runtime.db, whole["id"])  # nothing left to copy


async def test_a_limited_fork_reads_exactly_as_its_copy(held):
    app, client, uid = held
    cid, _made = await _source(client)
    db, p = app.state.runtime.db, Principal(id=uid, email="fork@example.com")
    part = await service.fork(db, p, cid, ForkIn(), limit=7)  # positions 5..11
    before = await _read(client, part["id"], 50)
    assert [m["text"] for m in before[1]["items"]] == [f"m{i}" for i in range(6, 12)]
    assert before[1]["items"][0]["parent_id"] is None and before[1]["next_cursor"] is None
    await forks.settle(db, part["id"])
    assert await _read(client, part["id"], 50) == before


async def test_reads_that_need_the_rows_copy_first_and_answer_once(held):
    app, client, _uid = held
    cid, _made = await _source(client)
    fork = await _fork(client, cid)
    page = (await _read(client, fork["id"], 3))[1]
    r = await client.get(
        f"/api/conversations/{fork['id']}/messages",
        params={"limit": 3, "before": page["next_cursor"]},
    )
    assert r.status_code == 200, r.text  # the HTTP layer copied the fork and asked again
    assert [m["text"] for m in r.json()["items"]] == ["m6", "m7", "m8"]
    assert not await _pending(app, fork["id"]) and await _stored(app, fork["id"]) == 10
    other = await _fork(client, cid)
    r = await client.get(f"/api/conversations/{other['id']}/messages", params={"mode": "tree"})
    assert r.status_code == 200 and len(r.json()["items"]) == 10, r.text
    # outside HTTP a read says so, with a 409 to retry
    third = await _fork(client, cid)
    p = Principal(id=_uid, email="fork@example.com")
    with pytest.raises(ForkPending) as e:
        await service.read_tree(app.state.runtime.db, p, third["id"])
    assert e.value.status == 409 and e.value.code == "fork_copying"


async def test_writes_to_a_pending_fork_copy_it_first(held):
    app, client, _uid = held
    cid, _made = await _source(client)
    a, b = await _fork(client, cid), await _fork(client, cid)
    added = await say(client, a["id"], "new in a")  # log-mode append
    assert added["depth"] == 12  # the copy keeps the source's positions (0-3, 6-11)
    assert texts(await path(client, a["id"]))[-2:] == ["m11", "new in a"]
    r = await client.post(
        f"/api/conversations/{b['id']}/messages", json={"content": "a turn", "generate": True}
    )
    assert r.status_code in (200, 201, 202), r.text
    items = await path(client, b["id"])
    assert texts(items)[9:11] == ["m11", "a turn"] and len(items) == 12  # + the answer
    r = await client.patch(f"/api/conversations/{b['id']}", json={"title": "renamed"})
    assert r.status_code == 200 and r.json()["title"] == "renamed"
    for fork in (a, b):
        assert not await _pending(app, fork["id"])


async def test_changing_the_source_copies_its_pending_forks_first(held):
    app, client, _uid = held
    cid, made = await _source(client)
    edited, cut, gone = await _fork(client, cid), await _fork(client, cid), await _fork(client, cid)
    expect = texts(await path(client, cid))
    r = await client.patch(
        f"/api/conversations/{cid}/messages/{made[0]['id']}", json={"content": "rewritten"}
    )
    assert r.status_code == 200, r.text
    r = await client.delete(f"/api/conversations/{cid}/messages/{made[2]['id']}")
    assert r.status_code == 200, r.text
    r = await client.delete(f"/api/conversations/{cid}")
    assert r.status_code == 204, r.text
    for fork in (edited, cut, gone):  # each holds the path as it was when it answered
        assert not await _pending(app, fork["id"])
        assert texts(await path(client, fork["id"])) == expect


async def test_the_source_cannot_be_deleted_under_a_pending_fork(held):
    """A deleting path that forgot to copy the forks first fails instead of losing them."""
    app, client, _uid = held
    cid, _made = await _source(client)
    fork = await _fork(client, cid)
    with pytest.raises(IntegrityError):
        async with app.state.runtime.db.write() as c:
            await c.execute(delete(t.conversations).where(C.id == cid))
    assert await _pending(app, fork["id"])
    r = await client.delete(f"/api/conversations/{fork['id']}")  # a pending fork goes as it is
    assert r.status_code == 204, r.text
    r = await client.delete(f"/api/conversations/{cid}")
    assert r.status_code == 204, r.text


async def test_the_queued_job_copies_a_fork_its_process_did_not(held):
    app, client, _uid = held
    cid, _made = await _source(client)
    fork = await _fork(client, cid)
    rt = app.state.runtime
    async with rt.db.read() as c:
        q = select(t.jobs.c.kind, t.jobs.c.payload).where(t.jobs.c.kind == forks.KIND)
        [job] = (await c.execute(q)).all()
    assert job.payload == {"conversation_id": fork["id"]}
    await rt.job_handlers[forks.KIND](rt, job.payload)
    assert not await _pending(app, fork["id"]) and await _stored(app, fork["id"]) == 10
    await rt.job_handlers[forks.KIND](rt, job.payload)  # again: nothing to do
    assert await _stored(app, fork["id"]) == 10


async def test_two_copiers_copy_once(held):
    app, client, _uid = held
    cid, _made = await _source(client)
    fork = await _fork(client, cid)
    db = app.state.runtime.db
    done = await asyncio.gather(*(forks.settle(db, fork["id"]) for _ in range(3)))
    assert sorted(done) == [False, False, True]
    assert await _stored(app, fork["id"]) == 10


async def test_a_users_export_holds_a_pending_forks_messages(held):
    app, client, _uid = held
    cid, _made = await _source(client)
    fork = await _fork(client, cid)
    r = await client.get(f"/api/conversations/{fork['id']}/export", params={"format": "json"})
    assert r.status_code == 200, r.text
    assert "m11" in r.text and not await _pending(app, fork["id"])


async def test_a_change_that_waited_for_a_forks_lock_copies_the_fork_first(held):
    """A round deletion of the source that starts while a fork is being made waits for the
    fork's commit (PostgreSQL: the fork's share lock on the source; SQLite: the one writer),
    then sees the fork and copies it first: the fork holds the path as it was."""
    app, client, uid = held
    cid, made = await _source(client)
    expect = texts(await path(client, cid))
    db, p = app.state.runtime.db, Principal(id=uid, email="fork@example.com")
    async with db.write() as c:  # a fork's transaction, step by step (service.fork)
        src = await store.get_conversation(c, uid, cid, for_share=True, pending_ok=True)
        fid = await store.insert_conversation(c, uid, title="held")
        plan, busy = await fork_store.plan_copy(c, cid, src.active_leaf_id, 1_000_000)
        assert plan is not None and busy == 0
        await forks.begin(c, fid, cid, plan)
        deleting = asyncio.ensure_future(service.delete_round(db, p, cid, made[2]["id"]))
        await asyncio.sleep(0.3)
        assert not deleting.done()  # it waits for the fork
    await deleting
    assert texts(await path(client, cid)) != expect
    assert not await _pending(app, fid)
    assert texts(await path(client, fid)) == expect


async def _agent_source(app, uid: str) -> tuple[str, str, list[str]]:
    """An agent's conversation (the /rpc inbox) with a finished answer to rate."""
    aid = await insert_agent(app, uid)
    async with app.state.runtime.db.write() as c:
        cid = await store.insert_conversation(c, uid, title="inbox", agent_id=aid)
    ids = await insert_messages(
        app,
        cid,
        [
            {"role": "user", "text": "hi", "created_at": 1_700_000_000_000},
            {"role": "assistant", "text": "hello", "created_at": 1_700_000_000_001},
        ],
    )
    return aid, cid, ids


async def test_an_rpc_rating_of_a_source_copies_its_pending_forks_first(held):
    """/rpc's rating writes the message's ``feedback`` mirror, which a copy carries: the fork
    that answered before the rating holds the message unrated."""
    app, client, uid = held
    aid, cid, ids = await _agent_source(app, uid)
    fork = await _fork(client, cid)
    r = await client.post(
        f"/rpc/chat/inbox/{aid}/messages/{ids[1]}/feedback", json={"rating": "positive"}
    )
    assert r.status_code == 200, r.text
    assert not await _pending(app, fork["id"])
    async with app.state.runtime.db.read() as c:
        q = select(M.conversation_id, M.feedback).where(M.role == "assistant")
        mirrors = dict((await c.execute(q)).all())
    assert mirrors == {cid: "like", fork["id"]: ""}


async def test_an_rpc_rating_of_a_pending_forks_message_copies_it_first(held):
    app, client, uid = held
    aid, cid, _ids = await _agent_source(app, uid)
    fork = await _fork(client, cid)
    page = (await client.get(f"/api/conversations/{fork['id']}/messages")).json()
    answer = next(m["id"] for m in page["items"] if m["role"] == "assistant")
    assert await _pending(app, fork["id"])  # the page was read from the source
    r = await client.post(
        f"/rpc/chat/inbox/{aid}/messages/{answer}/feedback", json={"rating": "negative"}
    )
    assert r.status_code == 200, r.text
    assert not await _pending(app, fork["id"])
    r = await client.post(
        f"/rpc/chat/inbox/{aid}/messages/msg_missing/feedback", json={"rating": "negative"}
    )
    assert r.status_code == 404, r.text


async def test_an_rpc_rating_waits_for_a_change_of_the_conversation(held):
    """The /rpc rating locks the conversation before it reads the message, as the native one
    does: a deletion that held the lock leaves it a 404, not a rating of a removed row."""
    app, client, uid = held
    aid, cid, ids = await _agent_source(app, uid)
    async with app.state.runtime.db.write() as c:
        await store.get_conversation(c, uid, cid, for_change=True)
        rating = asyncio.ensure_future(
            client.post(
                f"/rpc/chat/inbox/{aid}/messages/{ids[1]}/feedback", json={"rating": "positive"}
            )
        )
        await asyncio.sleep(0.3)
        assert not rating.done()
        await c.execute(delete(t.messages).where(M.id == ids[1]))
    r = await rating
    assert r.status_code == 404, r.text

"""What one turn runs against the database (issue 18, "a turn does less"), on SQLite and
PostgreSQL: a new conversation's first turn reads no path (the turn has just written all of it),
its ``message_start`` is stored with the rest of a quick answer's log in one INSERT, PostgreSQL
locks the conversation and the user's row in one statement and ends the turn in one (the row,
its events, its lease, its jobs) — and the log, the resume, the closing event's message, a crash
before the first flush and a row ended by someone else behave as before."""

from __future__ import annotations

import asyncio

from sqlalchemy import event, select

from chatmem.db import schema as t
from chatmem.generation.finalize import end_orphan
from chatmem.generation.sse import parse
from chatmem.generation.sweeper import Sweeper
from tests.test_generation import (
    client_for,
    count,
    deltas,
    insert_dead_turn,
    new_conv,
    running_app,
    stream,
    until,
)


class Statements:
    """The SQL text of every statement the engine runs while recording."""

    def __init__(self, engine) -> None:
        self.engine, self.seen, self.on = engine, [], False

    def _hook(self, conn, cursor, statement, *args) -> None:
        if self.on:
            self.seen.append(" ".join(statement.split()))

    def __enter__(self) -> Statements:
        event.listen(self.engine, "before_cursor_execute", self._hook)
        return self

    def __exit__(self, *exc) -> None:
        event.remove(self.engine, "before_cursor_execute", self._hook)

    def of(self, fragment: str) -> list[str]:
        return [s for s in self.seen if fragment in s]


async def _turn(c, cid: str, text: str, rec: Statements) -> list[dict]:
    """One turn streamed on its POST to ``done``; the statements it ran are in ``rec.seen``."""
    rec.seen.clear()
    rec.on = True
    try:
        r = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": text},
            headers={"Accept": "text/event-stream"},
        )
        assert r.status_code == 200, r.text
    finally:
        rec.on = False
    return parse(r.text)


async def test_a_turn_runs_few_statements(db_url):
    # no flush while these quick demo turns run (poke ignored, a long idle wait): each turn's
    # log is written by its final write alone; no worker or sweep statements in between
    quiet = dict(flush_interval_ms=60_000, run_worker=False, sweep_interval_s=3600)
    async with (
        running_app(db_url, **quiet) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        rt.generation.flusher.poke = lambda: None
        pg = rt.db.dialect == "postgresql"
        cid = await new_conv(c)
        await c.get(f"/api/conversations/{cid}")  # the key is cached: no auth read below
        with Statements(rt.db.engine.sync_engine) as rec:
            events = await _turn(c, cid, "What is a DAG?", rec)
            first = list(rec.seen)
            again = await _turn(c, cid, "And a tree?", rec)
            second = list(rec.seen)
        for evs in (events, again):
            assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
            assert evs[0]["type"] == "message_start" and evs[-1]["type"] == "done"
        # the first turn's path is its question: not read; a reply's path is
        assert not [s for s in first if "WITH RECURSIVE path" in s]
        assert [s for s in second if "WITH RECURSIVE path" in s]
        # a reply's parent (the active leaf, with its jumps) comes with the conversation's row
        assert not [s for s in second if "AS j1_jump_id" in s]
        [conv_read] = [s for s in second if "AS may_have_memories" in s]
        assert "AS p_j2_jump_depth" in conv_read
        assert 'You asked: "What is a DAG?"' in deltas(events)
        # message_start, the text, usage and done: one INSERT (on PostgreSQL in the end's WITH)
        logged = [s for s in first if "INSERT INTO stream_events" in s]
        assert len(logged) == 1
        # PostgreSQL: the user's row is locked with the conversation, not by a statement of its own
        assert not [s for s in first if s.startswith("SELECT users.id")]
        if pg:  # ... by the opening statement itself, outside a transaction (a read before it)
            locked = [s for s in first if "FOR NO KEY UPDATE OF users" in s]
            assert len(locked) == 1 and "FOR UPDATE OF conversations" in locked[0]
            assert "INSERT INTO messages" in locked[0]
            assert "chatmem_live_leases(locked.id" in locked[0]  # the cap, counted after the lock
            assert not [s for s in first if "FOR UPDATE" in s and s not in locked]
        # SQLite: 2 BEGIN IMMEDIATE + conversation, lease, messages, touch; end, events, lease
        # release, jobs — no memory read: the user has none (the conversation's statement says
        # so). PostgreSQL: the conversation read, then the locks, the lease, the messages and the
        # conversation's UPDATE in one statement (start_store.open_turn with a lock); the ending in
        # one: the row's UPDATE, the events, the lease's release and the jobs
        # (finalize.end_turn_at_once), its own transaction
        assert not [s for s in first if "memories.memory_text" in s]
        assert len(first) <= (3 if pg else 10), "\n".join(s[:90] for s in first)
        release = "DELETE FROM conversation_generation_leases WHERE"
        if pg:
            assert not [s for s in first if s.startswith((release, "INSERT INTO jobs"))]
            [end] = [s for s in first if s.startswith("WITH ended AS (UPDATE messages SET")]
            assert logged == [end] and release in end and "INSERT INTO jobs" in end
            lease = "lease AS (INSERT INTO conversation_generation_leases"
            [start] = [s for s in first if "INSERT INTO conversation_generation_leases" in s]
            assert start.startswith("WITH locked AS MATERIALIZED (SELECT users.id")
            assert lease in start and "INSERT INTO messages" in start
            assert "UPDATE conversations SET" in start
        else:  # the turn's own lease, by key: not the prefix scan of an ender without the token
            [own] = [s for s in first if s.startswith(release)]
            assert "conversation_id = ?" in own and " LIKE " not in own
        async with rt.db.read() as cx:
            mid = events[0]["data"]["assistant_message_id"]
            q = select(t.stream_events.c.seq, t.stream_events.c.type).where(
                t.stream_events.c.message_id == mid
            )
            stored = sorted((await cx.execute(q)).all())
        assert [tuple(r) for r in stored] == [(e["seq"], e["type"]) for e in events]
        assert await count(rt.db, t.conversation_generation_leases) == 0  # released, both
        # resume from every event, as before
        for e in events[:-1]:
            tail = await stream(c, cid, mid, after=e["seq"])
            assert tail == events[e["seq"] :]


async def test_a_turn_dead_before_its_first_flush_ends_with_the_sweepers_event(db_url):
    """A process that died before its first flush stored no event (not even message_start, which
    no client was shown): the sweeper's closing event is the log's first, and a client gets it."""
    async with (
        running_app(db_url, sweep_interval_s=3600) as application,
        client_for(application) as c,
    ):
        rt = application.state.runtime
        cid = await new_conv(c)
        dead = await insert_dead_turn(rt, c, cid, question=[], answer=[])
        assert await Sweeper(rt).sweep_once() == [dead.id]
        events = await stream(c, cid, dead.id)
        assert [(e["seq"], e["type"]) for e in events] == [(1, "error")]
        assert events[0]["data"]["code"] == "generation_interrupted"
        assert events[0]["data"]["recovered"] is True
        msg = (await c.get(f"/api/conversations/{cid}/messages/{dead.id}")).json()
        assert msg["status"] == "error"


async def test_a_turn_reads_memories_only_when_there_may_be_some(db_url):
    """A user with no memory row at the turn's start: its context reads none (the conversation's
    statement said so: ``may_have_memories``). A "remember …" command of the turn itself, a
    memory written since an earlier turn, and a workspace's shared memory (whose rows are not
    the member's) are still in the answer."""
    async with (
        running_app(db_url, run_worker=False) as application,
        client_for(application) as user,
        client_for(application) as owner,
        client_for(application) as member,
    ):
        rt = application.state.runtime
        read = "memories.memory_text"  # the memory read's columns (not the probe's EXISTS)
        cid = await new_conv(user)
        with Statements(rt.db.engine.sync_engine) as rec:
            events = await _turn(user, cid, "Hello there", rec)
            assert not rec.of(read) and "I remember" not in deltas(events)
            events = await _turn(user, await new_conv(user), "Remember that I like tea.", rec)
            assert rec.of(read) and "I remember 1 things" in deltas(events)
            events = await _turn(user, cid, "What do I like?", rec)
            assert rec.of(read) and "I remember 1 things" in deltas(events)
        # a workspace conversation: its memory is the workspace's (rows written by its owner)
        wid = (await owner.post("/api/workspaces", json={"name": "Team"})).json()["id"]
        r = await owner.post(f"/api/workspaces/{wid}/invites", json={"role": "member"})
        r = await member.post("/api/workspace-invites/join", json={"token": r.json()["token"]})
        assert r.status_code == 200, r.text
        r = await owner.post(f"/api/workspaces/{wid}/memories", json={"memory_text": "Uses Rust"})
        assert r.status_code == 201, r.text
        r = await owner.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
        wcid = r.json()["id"]
        with Statements(rt.db.engine.sync_engine) as rec:
            events = await _turn(member, wcid, "Which language?", rec)
        assert rec.of(read) and "Uses Rust" in deltas(events)


async def _jobs_of(db, cid: str) -> list[str]:
    async with db.read() as cx:
        rows = (await cx.execute(select(t.jobs.c.kind, t.jobs.c.payload))).all()
    return sorted(k for k, p in rows if (p or {}).get("conversation_id") == cid)


async def test_the_closing_event_holds_the_message_as_stored(db_url):
    """The ``done`` event's message (on PostgreSQL built before the one ending statement, from
    the row as the turn inserted it) is the message as stored, streamed and resumed alike; the
    first turn's jobs are queued once."""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "Hi there", "metadata": {"k": "v"}},
            headers={"Accept": "text/event-stream"},
        )
        events = parse(r.text)
        done = events[-1]["data"]["message"]
        mid = done["id"]
        read = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        assert done == {k: read[k] for k in done}
        assert done["status"] == "complete" and done["text"] == deltas(events) != ""
        assert done["branch_count"] == 1 and done["sibling_ids"] == [mid]
        assert done["usage"]["output_tokens"] > 0 and done["gen_ms"] >= 0
        assert (await stream(c, cid, mid, after=len(events) - 1)) == events[-1:]
        assert await _jobs_of(rt.db, cid) == ["compaction", "memory.extract", "title"]
        assert await count(rt.db, t.conversation_generation_leases) == 0


async def test_an_answer_given_a_sibling_while_streaming_ends_with_both(db_url):
    """An answer regenerated while the first one streams: the first one's closing event counts
    both (PostgreSQL: the one-statement ending sees the sibling and leaves it to the
    transaction path), its log and jobs are written once, its lease is released."""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "slowly", "model": "slow"}
        )
        ids = r.json()
        first = ids["assistant_message_id"]
        r = await c.post(
            f"/api/conversations/{cid}/regenerate",
            json={"message_id": ids["user_message_id"], "model": "demo"},
            headers={"Accept": "text/event-stream"},
        )
        second = parse(r.text)[-1]["data"]["message"]["id"]
        application.state.gated.gate.set()
        events = await stream(c, cid, first)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert [e["type"] for e in events].count("done") == 1
        done = events[-1]["data"]["message"]
        assert done["branch_count"] == 2 and done["sibling_ids"] == [first, second]
        read = (await c.get(f"/api/conversations/{cid}/messages/{first}")).json()
        assert done == {k: read[k] for k in done}
        assert await _jobs_of(rt.db, cid) == ["compaction", "memory.extract", "title"]
        assert await count(rt.db, t.conversation_generation_leases) == 0


async def test_a_row_ended_by_someone_else_gets_no_second_ending(db_url):
    """A streaming row another ender closed (here: a stop's ``end_orphan``) while its turn ran:
    the turn's own final write ends nothing, logs nothing and queues no job for it."""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "slowly", "model": "slow"}
        )
        mid = r.json()["assistant_message_id"]
        runner = rt.generation.runners[mid]
        await until(lambda: asyncio.sleep(0, runner.text == ["first"]))
        async with rt.db.write() as cx:
            assert await end_orphan(cx, mid, stopped=True) is not None
        application.state.gated.gate.set()
        await until(lambda: asyncio.sleep(0, mid not in rt.generation.runners))
        events = await stream(c, cid, mid)
        assert [e["type"] for e in events][-1:] == ["done"]
        assert events[-1]["data"]["recovered"] is True
        assert [e["type"] for e in events].count("done") == 1
        assert await _jobs_of(rt.db, cid) == []
        assert await count(rt.db, t.conversation_generation_leases) == 0


async def test_a_turn_starts_from_the_rows_as_stored(db_url):
    """The conversation and the answer's row a turn keeps from its start (on PostgreSQL both
    from the one statement that took the lease and wrote them: start_store.open_turn, taking
    its locks under the active leaf, inside the locked transaction under an explicit parent)
    are the rows as stored. (A start
    that finds the branch busy writes nothing and answers 409: tests/test_generation.py, the
    double submit.)"""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        rt = application.state.runtime
        cid = await new_conv(c)
        first = None
        for n in range(2):  # under the active leaf, then under the first answer named
            how = {} if first is None else {"parent_id": first}
            body = {"content": "slowly", "model": "slow", **how}
            r = await c.post(f"/api/conversations/{cid}/messages", json=body)
            assert r.status_code == 202, r.text
            mid = r.json()["assistant_message_id"]
            spec = rt.generation.runners[mid].spec
            async with rt.db.read() as cx:
                q = select(t.conversations).where(t.conversations.c.id == cid)
                conv = (await cx.execute(q)).one()
                row = (await cx.execute(select(t.messages).where(t.messages.c.id == mid))).one()
            assert {k: getattr(spec.conv, k) for k in conv._mapping} == dict(conv._mapping)
            assert conv.active_leaf_id == mid and conv.message_count == 2 * (n + 1)
            moving = {"blocks", "search_text"}  # the flusher's
            assert {k: v for k, v in spec.placeholder._mapping.items() if k not in moving} == {
                k: v for k, v in row._mapping.items() if k not in moving
            }
            application.state.gated.gate.set()
            assert (await stream(c, cid, mid))[-1]["type"] == "done"
            application.state.gated.gate.clear()
            first = mid


async def test_two_replies_at_once_to_the_active_leaf(db_url):
    """Two questions sent at once under the active leaf: the one that waited for the other's
    lock finds the leaf moved to the other's answer, still streaming (409), whichever parent
    row its first statement had joined."""
    async with running_app(db_url, run_worker=False) as application, client_for(application) as c:
        cid = await new_conv(c)
        r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "hi"})
        await stream(c, cid, r.json()["assistant_message_id"])
        body = {"content": "next", "model": "slow"}
        replies = await asyncio.gather(
            *(c.post(f"/api/conversations/{cid}/messages", json=body) for _ in range(2))
        )
        assert sorted(r.status_code for r in replies) == [202, 409], [r.text for r in replies]
        ok, refused = sorted(replies, key=lambda r: r.status_code)
        running = ok.json()["assistant_message_id"]
        assert refused.json()["error"]["code"] == "parent_streaming"
        assert refused.json()["error"]["details"] == {"message_id": running}
        application.state.gated.gate.set()
        assert (await stream(c, cid, running))[-1]["type"] == "done"

"""What one turn runs against the database (issue 18, "a turn does less"), on SQLite and
PostgreSQL: a new conversation's first turn reads no path (the turn has just written all of it),
its ``message_start`` is stored with the rest of a quick answer's log in one INSERT, PostgreSQL
locks the conversation and the user's row in one statement — and the log, the resume and a crash
before the first flush behave as before."""

from __future__ import annotations

from sqlalchemy import event, select

from chatmem.db import schema as t
from chatmem.generation.sweeper import Sweeper
from tests.test_generation import (
    client_for,
    count,
    deltas,
    insert_dead_turn,
    new_conv,
    running_app,
    stream,
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
    from chatmem.generation.sse import parse

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
        assert 'You asked: "What is a DAG?"' in deltas(events)
        # message_start, the text, usage and done: one INSERT
        assert len([s for s in first if s.startswith("INSERT INTO stream_events")]) == 1
        # PostgreSQL: the user's row is locked with the conversation, not by a statement of its own
        assert not [s for s in first if s.startswith("SELECT users.id")]
        if pg:
            locked = [s for s in first if "FOR NO KEY UPDATE OF users" in s]
            assert len(locked) == 1 and "FOR UPDATE OF conversations" in locked[0]
        # SQLite: 2 BEGIN IMMEDIATE + conversation, lease, messages, touch; end, events, lease
        # release, jobs — no memory read: the user has none (the conversation's statement says
        # so); PostgreSQL releases the lease in the end's own statement (a WITH)
        assert not [s for s in first if "memories.memory_text" in s]
        assert len(first) <= (7 if pg else 10), "\n".join(s[:90] for s in first)
        release = "DELETE FROM conversation_generation_leases WHERE"
        if pg:
            assert not [s for s in first if s.startswith(release)]
            [end] = [s for s in first if s.startswith("WITH released AS (" + release)]
            assert "UPDATE messages SET" in end
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

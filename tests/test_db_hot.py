"""db/hot.py: a store's hot statement run on the driver gives the same rows, writes the same
values and raises the same errors as through ``conn.execute`` — on both databases.

Each store function runs twice, once with the shortcut and once with ``hot.execute`` replaced by
a plain ``conn.execute`` (what it was before), and the two answers (and the rows they wrote, read
back through SQLAlchemy) are compared column by column: JSON documents, millisecond timestamps,
0/1 flags, NULLs, text with non-ASCII characters.
"""

from __future__ import annotations

import pytest
from sqlalchemy import bindparam, event, exc, insert, select, update

from chatmem.context import store as context
from chatmem.conversations import store as conversations
from chatmem.db import hot
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.generation import events, leases
from chatmem.generation import store as generation
from chatmem.jobs import queue
from chatmem.memory.store import fulltext

NOW_MS = 10**12  # times above this are now_ms() when the test ran
DOC = {"text": "ünïcode ✓", "n": 3, "ok": True, "none": None, "list": [1, 2.5, "x"]}


async def _plain(c, stmt, params=None):
    return await c.execute(stmt, params)


def _rows(result) -> list[dict]:
    return [dict(r._mapping) for r in result]


@pytest.fixture
async def db(db_url):
    d = Database(db_url)
    async with d.write() as c:
        await c.execute(
            insert(t.users).values(id="u1", email="u1@example.com", created_at=1, updated_at=1)
        )
    yield d
    await d.dispose()


async def _conversation(db, monkeypatch, plain: bool):
    """A conversation with a question and an answer, written by the stores' functions."""
    if plain:
        monkeypatch.setattr(hot, "execute", _plain)
    async with db.write() as c:
        conv = await conversations.insert_conversation_row(c, "u1", title="Tï", now=7)
        cid = conv.id
        got = await conversations.get_conversation(c, "u1", cid)
        rows = [
            {"id": f"{cid}q", "parent_id": None, "role": "user", "status": "done"},
            {"id": f"{cid}a", "parent_id": f"{cid}q", "role": "assistant", "status": "streaming"},
        ]
        for depth, r in enumerate(rows, 1):
            r.update(blocks=[{"type": "text", "text": "héllo"}], created_at=8, user_id="u1")
            r.update(depth=depth, jump_id=None, jump_depth=0, metadata=DOC)
        await conversations.insert_messages(c, conv, rows)
        appended = await conversations.insert_message(
            c,
            conv,
            parent_id=f"{cid}a",
            role="user",
            blocks=[],
            user_id="u1",
            id=f"{cid}m",
            created_at=8,
            now=8,
            touch=False,
            siblings=True,
            metadata=DOC,
        )
        touched = await conversations.touch_conversation(
            c, cid, added=2, created_at=8, now=9, leaf=f"{cid}a", returning=True
        )
        await events.insert_events(c, f"{cid}a", [{"seq": 1, "type": "text_delta", "data": DOC}])
        await events.insert_events(c, f"{cid}a", [{"seq": 1, "type": "text_delta", "data": {}}])
        partial = await generation.write_partial(c, f"{cid}a", [{"kind": "text", "text": "pärt"}])
        held = await generation.hold_streaming(c, [f"{cid}a", f"{cid}q"])  # (q: not streaming)
        page = await context.path_page_rows(c, cid, f"{cid}a", 10)
        taken = await leases.acquire(c, cid, f"{cid}q", "u1", f"{cid}a:s", 1000, 10, cap=5)
        renewed = await leases.renew(c, f"{cid}a:s", 500, 20)
        held_state = await leases.state(c, f"{cid}a:s")
        await leases.release_message(c, f"{cid}a")
        jobs = [queue.Job("k", DOC, dedupe_key=f"{cid}j"), queue.Job("k", {}, dedupe_key=f"{cid}j")]
        await queue.enqueue_many(c, [*jobs, queue.Job("k2", {"x": 1}, dedupe_key=f"{cid}k")])
        memories = await fulltext.injectable_top(
            c, "u1", None, 10, per_status=5, constraint_types=("rule", "x"), constraint_limit=5
        )
    monkeypatch.setattr(hot, "execute", _HOT)
    answers = [got, appended, touched, *page, *memories.values()]
    flags = (taken, partial, sorted(i.replace(cid, "C") for i in held), renewed, held_state)
    return cid, flags, [dict(r._mapping) for r in answers]


_HOT = hot.execute
_TOUCH = (
    t.conversations.update()
    .where(t.conversations.c.id == bindparam("b_cid"))
    .values(updated_at=t.conversations.c.updated_at + 1)
)


def _same(a: dict, b: dict, cid_a: str, cid_b: str) -> None:
    assert a.keys() == b.keys()
    for k in a:
        va, vb = a[k], b[k]
        if isinstance(va, str):
            va, vb = va.replace(cid_a, "C"), vb.replace(cid_b, "C")
        if isinstance(va, int) and va > NOW_MS and isinstance(vb, int) and vb > NOW_MS:
            va = vb  # the clock's time when written (events' created_at): an int both ways
        assert (k, va, type(va)) == (k, vb, type(vb))


async def _stored(db, cid: str) -> list[dict]:
    async with db.read() as c:
        out = []
        for table, col in (
            (t.conversations, t.conversations.c.id),
            (t.messages, t.messages.c.conversation_id),
            (t.conversation_generation_leases, t.conversation_generation_leases.c.conversation_id),
        ):
            out += _rows(await c.execute(select(table).where(col == cid).order_by(*table.c)))
        msg = t.stream_events.c.message_id
        out += _rows(await c.execute(select(t.stream_events).where(msg == f"{cid}a")))
        J = t.jobs.c
        jobs = select(*(col for col in t.jobs.c if col.name != "id"))
        jobs = jobs.where(J.dedupe_key.startswith(cid)).order_by(J.dedupe_key)
        return out + _rows(await c.execute(jobs))


async def test_hot_statements_answer_and_write_as_sqlalchemy_does(db, monkeypatch):
    async with db.write() as c:
        await c.execute(
            insert(t.memories).values(
                id="m1",
                user_id="u1",
                memory_text="likes tea",
                importance=4,
                created_at=1,
                updated_at=2,
            )
        )
    ran: list[str] = []
    real_run = hot._run

    async def counted(sync, adapt, plan, sql, args, *rest):
        ran.append(sql.split()[0])
        return await real_run(sync, adapt, plan, sql, args, *rest)

    monkeypatch.setattr(hot, "_run", counted)
    c1, flags_hot, hot_answers = await _conversation(db, monkeypatch, plain=False)
    # all on the driver, insert_messages's two rows as one INSERT … RETURNING
    hot_run = ["INSERT", "SELECT", "INSERT", "SELECT", "INSERT", "UPDATE", "INSERT", "INSERT"]
    hot_run += ["UPDATE", "UPDATE"]  # the flusher's: a partial row, the rows held
    hot_run += ["WITH"]
    hot_run += ["INSERT", "UPDATE", "SELECT", "DELETE", "INSERT"]  # (the lease's; the jobs')
    assert ran == [*hot_run, "SELECT"]  # the memory read too (an expanding IN)
    c2, flags_sa, sa_answers = await _conversation(db, monkeypatch, plain=True)
    assert flags_hot == flags_sa == (None, True, ["Ca"], "ok", "ok")
    assert len(hot_answers) == len(sa_answers) == 6  # conv, appended, touched, 2 path rows, memory
    for a, b in zip(hot_answers, sa_answers, strict=True):
        _same(a, b, c1, c2)
    stored_hot, stored_sa = await _stored(db, c1), await _stored(db, c2)
    # conv, 3 messages, 1 event, 2 jobs (one of the two with the same key left out); no lease
    assert len(stored_hot) == len(stored_sa) == 7
    for a, b in zip(stored_hot, stored_sa, strict=True):
        _same(a, b, c1, c2)
    assert stored_hot[4]["data"] == DOC  # the event: the repeated seq was left as it was


async def test_a_driver_error_is_sqlalchemys_and_rolls_back(db):
    user = {"id": "u2", "created_at": 1, "updated_at": 1}
    with pytest.raises(exc.IntegrityError):
        async with db.write() as c:
            await hot.execute(c, _INSERT_USER, {**user, "email": "a@example.com"})
            await hot.execute(c, _INSERT_USER, {**user, "email": "b@example.com"})
    async with db.write() as c:  # nothing kept, and the connection is usable
        await hot.execute(c, _INSERT_USER, {**user, "email": "c@example.com"})
        got = await c.execute(select(t.users.c.email).where(t.users.c.id == "u2"))
        assert got.scalars().all() == ["c@example.com"]


_INSERT_USER = insert(t.users)


async def test_statement_listeners_still_see_hot_statements(db):
    seen: list[str] = []

    def _seen(_conn, _cursor, statement, _params, _context, _many):
        seen.append(statement.split()[0])

    event.listen(db.engine.sync_engine, "before_cursor_execute", _seen)
    async with db.write() as c:
        await conversations.insert_conversation_row(c, "u1", title="a")
        await leases.release_message(c, "c9x")
    assert seen == ["INSERT", "DELETE"]


async def test_rowcount_and_fallback_outside_a_transaction(db):
    async with db.write() as c:
        cid = (await conversations.insert_conversation_row(c, "u1", title="a")).id
        r = await hot.execute(c, select(t.conversations.c.id).where(t.conversations.c.id == cid))
        assert r.scalar() == cid
        r = await hot.execute(c, _TOUCH, {"b_cid": cid})
        assert r.rowcount == 1
    async with db.engine.connect() as c:  # no transaction begun: SQLAlchemy's autobegin path
        r = await hot.execute(c, select(t.conversations.c.title))
        assert r.scalars().all() == ["a"]
        await c.rollback()


async def test_an_expanding_in_per_list_length(db):
    """The IN list's statement is kept per length: each call gives SQLAlchemy's answer."""
    users = [{"id": "e0", "email": "e0@example.com", "created_at": 1, "updated_at": 1}]
    users += [{**users[0], "id": "e2", "email": "e2@example.com"}]
    emails = select(t.users.c.id).where(t.users.c.email.in_(bindparam("e", expanding=True)))
    async with db.write() as c:
        await c.execute(_INSERT_USER, users)
        for wanted in (["e0@", "e2@"], ["e2@"], ["e2@", "e0@"], [], ["x", "e0@", "y"]):
            p = {"e": [f"{w}example.com" if w.endswith("@") else w for w in wanted]}
            got = sorted((await hot.execute(c, emails, p)).scalars())
            assert got == sorted((await c.execute(emails, p)).scalars())
            assert len(got) == sum(w.endswith("@") for w in wanted)


async def test_a_plans_later_runs_answer_as_its_first(db):
    """After its first result (which gives the plan its row keys) a statement's runs read no
    description (PostgreSQL's path): rows, no rows, RETURNING nothing, and row counts answer
    as SQLAlchemy's."""
    by_id = select(t.conversations.c.id, t.conversations.c.title).where(
        t.conversations.c.id == bindparam("cid")
    )
    renamed = (
        update(t.conversations)
        .where(t.conversations.c.id == bindparam("cid"))
        .values(title=bindparam("title"))
        .returning(t.conversations.c.title)
    )
    async with db.write() as c:
        cid = (await conversations.insert_conversation_row(c, "u1", title="a")).id
        for _ in range(3):
            assert (await hot.execute(c, by_id, {"cid": cid})).one()._asdict() == {
                "id": cid,
                "title": "a",
            }
            assert (await hot.execute(c, by_id, {"cid": "nope"})).first() is None
            assert (await hot.execute(c, renamed, {"cid": "nope", "title": "x"})).first() is None
            none = await hot.execute(c, by_id, {"cid": "nope"})
            assert none.all() == [] and none.rowcount in (0, -1)
            assert (await hot.execute(c, _TOUCH, {"b_cid": cid})).rowcount == 1
            assert (await hot.execute(c, _TOUCH, {"b_cid": "nope"})).rowcount == 0
        assert (await hot.execute(c, renamed, {"cid": cid, "title": "b"})).scalar() == "b"
        assert (await hot.execute(c, renamed, {"cid": cid, "title": "c"})).scalar_one() == "c"

"""Per-user plans: the main user-scoped reads use an index that leads with ``user_id``.

Issue 18: with many other users' rows present, a user's query must not walk everyone's rows (on
SQLite a search once walked every user's conversations, 5× slower with 1,000 other users). This
test fills the tables with 300 other users' conversations, memories, projects and agents, runs
the real service/store reads for one user while capturing the statements they send, and asks the
database for each statement's plan (SQLite ``EXPLAIN QUERY PLAN``; PostgreSQL ``EXPLAIN (FORMAT
JSON)`` after ``ANALYZE``): every user-scoped table the statement reads must be read through a
user-leading index (or by primary key), never scanned.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import event, insert, select

from chatmem.agents import store as agents_store
from chatmem.auth.models import Principal
from chatmem.conversations import store as conv_store
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from chatmem.memory import service as memory_service
from chatmem.memory import store as memory_store
from chatmem.projects import store as projects_store
from chatmem.search import service as search_service
from chatmem.search import store as search_store

OTHERS = 300
PER_USER = 20
SCOPED = ("conversations", "memories", "projects", "agents")


def _user_indexes() -> dict[str, set[str]]:
    """Per table: the names of its indexes whose first column is ``user_id``."""
    out: dict[str, set[str]] = {}
    for name in SCOPED:
        table = t.metadata.tables[name]
        out[name] = {
            ix.name
            for ix in table.indexes
            if ix.expressions and getattr(ix.expressions[0], "name", None) == "user_id"
        }
    return out


async def _fill(db: Database) -> str:
    now = 1_700_000_000_000
    users = [new_id("u") for _ in range(OTHERS + 1)]
    me = users[0]
    ts = {"created_at": now, "updated_at": now}
    convs, mems, projects, agents = [], [], [], []
    for k, u in enumerate(users):
        for j in range(PER_USER):
            convs.append({"id": new_id("c"), "user_id": u, "title": f"chat {k} {j}", **ts})
            mems.append({"id": new_id("mem"), "user_id": u, "memory_text": f"fact {k} {j}", **ts})
        for j in range(3):
            projects.append({"id": new_id("p"), "user_id": u, "name": f"p{j}", **ts})
            agents.append(
                {"id": new_id("a"), "user_id": u, "name": f"a{j}", "handle": f"a{k}x{j}", **ts}
            )
    async with db.write() as c:
        await c.execute(
            insert(t.users), [{"id": u, "email": f"{u}@example.com", **ts} for u in users]
        )
        for table, rows in (
            (t.conversations, convs),
            (t.memories, mems),
            (t.projects, projects),
            (t.agents, agents),
        ):
            await c.execute(insert(table), rows)
    if db.dialect == "postgresql":
        async with db.engine.connect() as c:
            await c.exec_driver_sql("ANALYZE")
    return me


class Capture:
    """The SELECT statements (and their parameters) a block of code sends."""

    def __init__(self, db: Database) -> None:
        self.engine = db.engine.sync_engine
        self.seen: list[tuple[str, object]] = []

    def _hook(self, conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "WITH")) and not executemany:
            self.seen.append((statement, parameters))

    def __enter__(self):
        event.listen(self.engine, "before_cursor_execute", self._hook)
        return self

    def __exit__(self, *exc):
        event.remove(self.engine, "before_cursor_execute", self._hook)


def _sqlite_problems(plan: list[str], wanted: dict[str, set[str]]) -> list[str]:
    bad = []
    for line in plan:
        for table, names in wanted.items():
            if f" {table}" not in f" {line}":
                continue
            words = line.split()
            if words[0] == "SCAN" and words[1] == table:
                bad.append(line)
            elif words[0] == "SEARCH" and words[1] == table:
                if "PRIMARY KEY" in line or "USING INTEGER PRIMARY KEY" in line:
                    continue
                if not any(f"INDEX {n} " in line + " " for n in names):
                    bad.append(line)
    return bad


def _pg_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _pg_nodes(child)


def _pg_problems(plan: dict, wanted: dict[str, set[str]]) -> list[str]:
    bad = []
    for node in _pg_nodes(plan["Plan"]):
        table = node.get("Relation Name")
        kind = node["Node Type"]
        if kind == "Seq Scan" and table in wanted:
            bad.append(f"Seq Scan on {table}")
        index = node.get("Index Name")
        if index and table in wanted and index not in wanted[table] | {f"{table}_pkey"}:
            bad.append(f"{kind} on {table} using {index}")
    return bad


async def _explain(db: Database, sql: str, params) -> list[str]:
    wanted = _user_indexes()
    touched = {k: v for k, v in wanted.items() if k in sql}
    async with db.engine.connect() as c:
        if db.dialect == "postgresql":
            r = await c.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql, params)
            raw = r.scalar()
            plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]
            return _pg_problems(plan, touched)
        r = await c.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params)
        return _sqlite_problems([row[3] for row in r.all()], touched)


async def _main_reads(db: Database, me: str) -> None:
    """The user-scoped reads of the conversation list, search, memories, projects and agents."""
    p = Principal(id=me, email=f"{me}@example.com")
    async with db.read() as c:
        q = conv_store.list_query(
            me, archived=False, starred=None, project_id=None, agent_id=None, cursor=None, limit=50
        )
        assert len(await conv_store.rows_of(c, q)) == PER_USER
        assert await search_store.titles(c, me, "chat")
        await memory_store.live_visible(c, me, None)
        assert len(await projects_store.list_personal(c, me)) == 3
        assert len(await agents_store.list_by_last_message(c, me)) == 3
    page = await memory_service.list_memories(db, p)
    assert len(page["items"]) == PER_USER


@pytest.mark.asyncio
async def test_user_scoped_reads_use_user_leading_indexes(db_url):
    db = Database(db_url)
    try:
        me = await _fill(db)
        with Capture(db) as cap:
            await _main_reads(db, me)
        scoped = [(s, prm) for s, prm in cap.seen if any(name in s for name in SCOPED)]
        assert len(scoped) >= 6, cap.seen
        problems = {}
        for sql, params in scoped:
            bad = await _explain(db, sql, params)
            if bad:
                problems[" ".join(sql.split())[:160]] = bad
        assert not problems, problems
    finally:
        await db.dispose()


async def _fill_messages(db: Database, word: str) -> None:
    """100 messages for each user, ``word`` in every other one."""
    async with db.write() as c:
        users = (await c.execute(select(t.users.c.id))).scalars().all()
        convs, msgs = [], []
        for u in users:
            cid = new_id("c")
            convs.append({"id": cid, "user_id": u, "created_at": 1, "updated_at": 1})
            for i in range(100):
                body = f"{word if i % 2 else 'other'} text {i}"
                msgs.append(
                    {
                        "id": new_id("msg"),
                        "conversation_id": cid,
                        "user_id": u,
                        "role": "user",
                        "search_text": body,
                        "created_at": 1_700_000_000_000 + i,
                        "depth": i,
                    }
                )
        await c.execute(insert(t.conversations), convs)
        await c.execute(insert(t.messages), msgs)
    if db.dialect == "postgresql":
        async with db.engine.connect() as c:
            await c.exec_driver_sql("ANALYZE")
            await c.commit()


@pytest.mark.asyncio
async def test_search_walks_a_users_messages_newest_first_for_a_common_word(db_url):
    """Searching a word in half the messages: on PostgreSQL the newest matches come from a walk
    of the user's own messages down ``idx_messages_user_recent`` (migration 0019) — no GIN bitmap
    of every match, no sort; on SQLite from FTS5, which reads the newest matches first."""
    db = Database(db_url)
    try:
        me = await _fill(db)
        await _fill_messages(db, "plum")
        with Capture(db) as cap:
            found = await search_service.search(db, Principal(id=me, email="x@y.z"), "plum")
        assert len(found["messages"]) == search_service.MESSAGE_LIMIT
        walks = [(s, prm) for s, prm in cap.seen if "ORDER BY created_at DESC, id DESC LIMIT" in s]
        if db.dialect == "sqlite":
            assert walks == []
            return
        [(sql, params)] = walks
        async with db.engine.connect() as c:
            raw = (await c.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql, params)).scalar()
        plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]
        nodes = list(_pg_nodes(plan["Plan"]))
        names = {n.get("Index Name") for n in nodes}
        kinds = {n["Node Type"] for n in nodes}
        assert "idx_messages_user_recent" in names, nodes
        assert "idx_messages_fts" not in names and "Sort" not in kinds, nodes
    finally:
        await db.dispose()

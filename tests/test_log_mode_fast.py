"""The log-mode append in one statement (PostgreSQL) or three (SQLite), on both databases
(conversations/append_store.py): what it writes is what the statement-per-step path wrote —
jump pointers by ``dag.jump_for``, counters, the debounced job — and it gives way to that path
when a concurrent transaction moved the active leaf while it waited for the conversation's
lock. (404, 422 and the dangling-leaf repair: tests/test_isolation.py, tests/test_tree.py.)"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from contextlib import contextmanager

import asyncpg
import pytest
from sqlalchemy import event, select

from chatmem.conversations import append_store, dag, store
from chatmem.db import hot
from chatmem.db import schema as t
from chatmem.jobs.queue import Job

from .tree_api import conv, new_conv, say

M = t.messages.c
J = t.jobs.c


async def _rows(db, cid: str) -> dict:
    async with db.read() as c:
        rows = (await c.execute(select(t.messages).where(M.conversation_id == cid))).all()
    return {r.id: r for r in rows}


def _expected_place(rows: dict, parent_id: str | None) -> tuple:
    """(depth, jump_id, jump_depth) of a new child of ``parent_id``, by ``dag.jump_for``."""
    if parent_id is None:
        return 0, None, None
    p = rows[parent_id]
    jr = rows.get(p.jump_id) if p.jump_id else None
    jump_jump = (jr.jump_id, jr.jump_depth) if jr is not None else (None, None)
    jump = dag.jump_for(p.id, p.depth, (p.jump_id, p.jump_depth), jump_jump)
    return p.depth + 1, *jump


async def test_places_follow_jump_for(new_user, app):
    """Along a chain, a branch under an older message, a new root and below a deleted round,
    every new row's depth and jump pointer are ``dag.jump_for``'s for its parent as it was."""
    db = app.state.runtime.db
    a = await new_user()
    cid = (await new_conv(a.client))["id"]

    async def append(**how) -> dict:
        before = await _rows(db, cid)
        m = await say(a.client, cid, f"m{len(before)}", **how)
        row = (await _rows(db, cid))[m["id"]]
        assert (row.depth, row.jump_id, row.jump_depth) == _expected_place(before, m["parent_id"])
        assert m["depth"] == row.depth
        return m

    chain = [await append(role=("user", "assistant")[i % 2]) for i in range(40)]
    assert chain[0]["parent_id"] is None and chain[-1]["parent_id"] == chain[-2]["id"]
    rows = (await _rows(db, cid)).values()
    assert any(r.jump_id not in (None, r.parent_id) for r in rows)  # pointers that skip
    branch = await append(parent=chain[9]["id"])
    assert (branch["branch_index"], branch["branch_count"]) == (1, 2)
    for _ in range(6):
        await append()
    root = await append(parent=None)
    assert root["depth"] == 0 and root["branch_count"] == 2
    # a round whose messages other rows jump to: their children point past it afterwards
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{chain[30]['id']}")
    assert r.status_code == 200, r.text
    r = await a.client.patch(
        f"/api/conversations/{cid}/active-leaf", json={"leaf_id": chain[-1]["id"]}
    )
    assert r.status_code == 200, r.text
    for _ in range(5):
        await append()
    c = await conv(a.client, cid)
    assert c["message_count"] == len(await _rows(db, cid))


@contextmanager
def _counted(db):
    """The first word of each statement the calling task runs (not the app's background
    services): the in-process client runs the app in the caller's task."""
    seen: list[str] = []
    task = asyncio.current_task()

    def count(conn, cursor, statement, *args):
        if asyncio.current_task() is task:
            seen.append(statement.split(None, 1)[0].upper())

    engine = db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def test_statements_per_append(new_user, app):
    """PostgreSQL: one statement (the call of ``chatmem_append_logged``), its own transaction; SQLite: the INSERT … SELECT, the
    counters' UPDATE and the job INSERT. The debounced job is queued once either way."""
    db = app.state.runtime.db
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    await say(a.client, cid, "first")
    with _counted(db) as seen:
        for i in range(5):
            await say(a.client, cid, f"more {i}")
    per = Counter(seen)
    if db.sqlite:
        assert per == Counter({"INSERT": 10, "UPDATE": 5}), per
    else:  # SELECT … FROM chatmem_append_logged(…)
        assert per == Counter({"SELECT": 5}), per
    c = await conv(a.client, cid)
    assert c["message_count"] == 6
    async with db.read() as conn:
        jobs = (await conn.execute(select(J.kind, J.status, J.dedupe_key))).all()
    assert [tuple(j) for j in jobs] == [("followups", "queued", f"followups:{cid}")]


async def test_waits_for_the_lock_and_follows_the_moved_leaf(new_user, app):
    """An append that waits on a transaction holding the conversation (PostgreSQL: its row
    lock; SQLite: the write lock) appends under the leaf that transaction committed, and counts
    on its counters; one that only changed the title appends under the leaf it saw."""
    db = app.state.runtime.db
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    first = await say(a.client, cid, "first")
    async with db.write() as c:
        row = await store.get_conversation(c, a.id, cid, for_update=True)
        held = await store.insert_message(
            c, row, parent_id=first["id"], role="assistant", blocks=[], user_id=a.id
        )
        waiting = asyncio.create_task(say(a.client, cid, "after the held one"))
        await asyncio.sleep(0.5)
        assert not waiting.done()
    m = await waiting
    assert m["parent_id"] == held.id and m["depth"] == 2
    async with db.write() as c:
        await store.get_conversation(c, a.id, cid, for_update=True)
        await store.update_conversation(c, cid, title="renamed")
        waiting = asyncio.create_task(say(a.client, cid, "after the rename"))
        await asyncio.sleep(0.5)
        assert not waiting.done()
    n = await waiting
    assert n["parent_id"] == m["id"] and n["depth"] == 3
    c = await conv(a.client, cid)
    assert (c["message_count"], c["active_leaf_id"], c["title"]) == (4, n["id"], "renamed")


DOC = {"text": "ünïcode ✓", "n": 3, "ok": True, "none": None, "list": [1, 2.5, "x"]}


async def _plain(c, stmt, params=None):
    return await c.execute(stmt, params)


async def _appended_three(db, user_id: str) -> tuple[str, list]:
    """A root, a message under the leaf and a branch under the root, by ``append_logged``:
    the rows it returned and the rows it wrote (conversation, messages, jobs)."""
    async with db.write() as c:
        cid = (await store.insert_conversation_row(c, user_id, title="Tï", now=7)).id
    got = []
    for n, (under, parent) in enumerate((("root", None), ("leaf", None), ("given", f"{cid}0"))):
        values = {"id": f"{cid}{n}", "role": ("user", "assistant")[n % 2], "created_at": 8 + n}
        values.update(blocks=[{"type": "text", "text": "héllo"}], metadata=DOC, model_id="mö")
        jobs = [Job("k", DOC, f"{cid}j", 5), Job("k2", {}, f"{cid}k{n}")]
        async with db.write() as c:
            row = await append_store.append_logged(
                c, cid, user_id, under, parent, values=values, jobs=jobs, now=20 + n
            )
        got.append(dict(row._mapping))
    async with db.read() as c:
        for table, col in ((t.conversations, "id"), (t.messages, "conversation_id")):
            q = select(table).where(table.c[col] == cid).order_by(table.c.id)
            got += [dict(r._mapping) for r in (await c.execute(q)).all()]
        jobs = select(*(col for col in t.jobs.c if col.name != "id"))
        jobs = jobs.where(J.dedupe_key.startswith(cid)).order_by(J.dedupe_key)
        got += [dict(r._mapping) for r in (await c.execute(jobs)).all()]
    return cid, got


async def test_on_the_driver_as_through_sqlalchemy(new_user, app, monkeypatch):
    """``hot.execute`` runs the statements with the answers and writes ``conn.execute`` gives
    (JSON documents, non-ASCII text, integers, NULL pointers of a root)."""
    db = app.state.runtime.db
    a = await new_user()
    runs = [await _appended_three(db, a.id)]
    monkeypatch.setattr(hot, "execute", _plain)
    runs.append(await _appended_three(db, a.id))
    monkeypatch.undo()
    (c1, hot_rows), (c2, plain_rows) = runs
    assert len(hot_rows) == len(plain_rows) == 3 + 1 + 3 + 4  # 4 jobs: one key was queued
    for x, y in zip(hot_rows, plain_rows, strict=True):
        keep = {k for k in x if k not in ("updated_at", "created_at", "run_after") or "role" in x}
        if x.get("parent_id", "") is None:  # a root's siblings are read, not returned (the
            keep.discard("siblings_json")  # column is meaningless for a root on SQLite)
        fx = json.dumps({k: x[k] for k in keep}, sort_keys=True, default=repr)
        fy = json.dumps({k: y[k] for k in keep}, sort_keys=True, default=repr)
        assert fx.replace(c1, "C") == fy.replace(c2, "C")
    assert hot_rows[1]["metadata"] == DOC and hot_rows[2]["jump_id"] == f"{c1}0"


#: many users' rows: OTHERS users, each with CONVS conversations of DEPTH messages (a chain), and
#: a workspace whose members they all are, where each has a conversation open to the others
OTHERS, CONVS, DEPTH = 300, 3, 30
_FILL = (
    "INSERT INTO users (id, email, name, password_hash, role, settings, created_at, updated_at) "
    f"SELECT 'pu' || u, 'pu' || u || '@example.com', 'n', '', 'user', '{{}}', 0, 0 "
    f"FROM generate_series(1, {OTHERS}) AS u",
    "INSERT INTO workspaces (id, name, owner_id, created_at, updated_at) "
    "VALUES ('pw', 'w', 'pu1', 0, 0)",
    "INSERT INTO workspace_members (workspace_id, user_id, role, created_at) "
    f"SELECT 'pw', 'pu' || u, 'member', 0 FROM generate_series(1, {OTHERS}) AS u",
    "INSERT INTO conversations (id, user_id, workspace_id, is_public, created_at, updated_at) "
    "SELECT 'pc' || u || '_' || k, 'pu' || u, CASE WHEN k = 1 THEN 'pw' ELSE '' END, "
    "CASE WHEN k = 1 THEN 1 ELSE 0 END, 0, 0 "
    f"FROM generate_series(1, {OTHERS}) AS u, generate_series(1, {CONVS}) AS k",
    # search_tsv given: the trigger would only slow the fill down
    "INSERT INTO messages (id, conversation_id, parent_id, role, created_at, user_id, depth, "
    "search_tsv) SELECT 'pm' || u || '_' || k || '_' || d, 'pc' || u || '_' || k, "
    "CASE WHEN d > 0 THEN 'pm' || u || '_' || k || '_' || (d - 1) END, 'user', d, 'pu' || u, d, "
    f"'' FROM generate_series(1, {OTHERS}) AS u, generate_series(1, {CONVS}) AS k, "
    f"generate_series(0, {DEPTH - 1}) AS d ORDER BY d",
    f"UPDATE conversations SET active_leaf_id = 'pm' || substr(id, 3) || '_{DEPTH - 1}' "
    "WHERE id LIKE 'pc%'",
)
_CALL = (
    "SELECT id FROM chatmem_append_logged($1, $2, $3, $4, $5, 'user', '[]', '', 1, '{}', '', "
    "1, '[]')"
)


async def _plans(conn, places: list[tuple]) -> list[str]:
    """Per call of ``chatmem_append_logged`` (conversation, user, place, parent): the plan it
    ran its statement with (auto_explain's notices)."""
    seen: list[str] = []

    def listen(_conn, message) -> None:
        seen.append(message.message)

    conn.add_log_listener(listen)
    out = []
    try:
        for cid, uid, under, given in places:
            seen.clear()
            row = await conn.fetchrow(_CALL, cid, uid, under, given, f"plan{uuid.uuid4().hex}")
            assert row is not None
            [plan] = [m for m in seen if "WITH ins AS" in m]
            out.append(plan)
    finally:
        conn.remove_log_listener(listen)
    return out


async def _explaining(url: str):
    """A connection as the engine opens them, that reports its statements' plans."""
    conn = await asyncpg.connect(url, server_settings={"plan_cache_mode": "force_custom_plan"})
    try:
        await conn.execute("LOAD 'auto_explain'")
    except asyncpg.PostgresError as e:  # not installed, or not a superuser
        await conn.close()
        pytest.skip(f"auto_explain unavailable: {e}")
    await conn.execute(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; "
        "SET auto_explain.log_level = notice"
    )
    return conn


def _by_key(plan: str, under: str) -> None:
    assert "Seq Scan" not in plan, plan
    assert "idx_messages_conv" not in plan, plan  # the parent is not looked for among its siblings
    assert "using pk_conversations on conversations conv " in plan, plan
    if under != "root":
        assert "using pk_messages on messages p " in plan, plan


async def test_function_plans_reach_rows_by_key(new_user, app):
    """PostgreSQL: ``chatmem_append_logged`` plans its statements once per connection, with no
    parameter values and whatever the statistics are then (migration 0022). Made on the test's
    small tables and used after many users' rows arrived, and made again after ANALYZE, the plan
    of every place — in a personal and a workspace conversation — reaches each row through a
    key: no table scanned, the parent not looked for among the conversation's messages."""
    db = app.state.runtime.db
    if db.sqlite:
        pytest.skip("SQLite runs the statement itself (append_store._insert_select)")
    url = db.url.replace("postgresql+asyncpg://", "postgresql://")
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    first = await say(a.client, cid, "first")
    mine = [(cid, a.id, under, first["id"]) for under in ("leaf", "given", "root")]
    theirs = [("pc7_1", "pu9", "leaf", None), ("pc7_2", "pu7", "given", f"pm7_2_{DEPTH - 5}")]
    conn = await _explaining(url)
    try:
        plans = await _plans(conn, mine)
        for statement in _FILL:
            await conn.execute(statement)
        plans += await _plans(conn, mine + theirs)  # the plans made on the small tables
    finally:
        await conn.close()
    async with db.write() as c:  # a new connection after ANALYZE: plans made with statistics
        await c.exec_driver_sql("ANALYZE")
    conn = await _explaining(url)
    try:
        plans += await _plans(conn, mine + theirs)
    finally:
        await conn.close()
    unders = [p[2] for p in mine] + [p[2] for p in mine + theirs] * 2
    for plan, under in zip(plans, unders, strict=True):
        _by_key(plan, under)

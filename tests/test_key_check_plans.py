"""Bulk writes reuse PostgreSQL's foreign-key check plans, and only they (db/engine.py,
``reuse_key_check_plans``).

The engine plans every statement with its parameters (``plan_cache_mode = force_custom_plan``);
the per-row foreign-key checks and ON DELETE cascades of a bulk write would then be planned again
for every row. The bulk statements (a conversation's, an agent's, a workspace's or an account's
deletion, an import's and a fork's message inserts) run with ``auto``; every other statement,
including the rest of their transaction, keeps the engine's setting. SQLite: nothing is sent.
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event, select

from chatmem.conversations import forks
from chatmem.db import schema as t
from chatmem.db.engine import Database, reuse_key_check_plans

from .port_support import DATA, client_for, import_file, port_app
from .tree_api import count, new_conv, say

ENGINE_MODE = "force_custom_plan"
AUTO = "SET LOCAL plan_cache_mode = auto"
RESTORE = "SET LOCAL plan_cache_mode = DEFAULT"


class Trace:
    """Every statement the app runs, with the plan mode it ran under (followed per connection:
    ``SET LOCAL`` switches it, the transaction's end puts the engine's back)."""

    def __init__(self, db: Database) -> None:
        self.engine = db.engine.sync_engine
        self.ran: list[tuple[str, str]] = []  # (statement, mode)
        self.ended_in: list[str] = []  # the mode each transaction ended in
        self._mode: dict[int, str] = {}
        event.listen(self.engine, "before_cursor_execute", self._statement)
        for name in ("commit", "rollback"):
            event.listen(self.engine, name, self._end)

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._statement)
        for name in ("commit", "rollback"):
            event.remove(self.engine, name, self._end)

    def _statement(self, conn, _cursor, statement, _params, _context, _many) -> None:
        s = " ".join(statement.split())
        if s == AUTO:
            self._mode[id(conn)] = "auto"
        elif s == RESTORE:
            self._mode[id(conn)] = ENGINE_MODE
        self.ran.append((s, self._mode.get(id(conn), ENGINE_MODE)))

    def _end(self, conn) -> None:
        self.ended_in.append(self._mode.pop(id(conn), ENGINE_MODE))

    def start(self) -> None:
        self.ran.clear()
        self.ended_in.clear()

    def auto(self) -> set[str]:
        """What the statements that ran with ``auto`` write (``DELETE FROM x``; a statement that
        writes nothing: its first three words), the switches aside."""
        out = set()
        for s, mode in self.ran:
            if mode == "auto" and s != AUTO:
                m = re.search(r"\b(INSERT INTO|DELETE FROM|UPDATE) (\w+)", s)
                out.add(f"{m[1]} {m[2]}" if m else " ".join(s.split()[:3]))
        return out

    def check(self, db: Database, expected: set[str]) -> None:
        switches = [s for s, _ in self.ran if "plan_cache_mode" in s]
        if db.dialect != "postgresql":
            assert switches == []  # a no-op on SQLite
            return
        assert self.auto() == expected
        assert switches.count(AUTO) == switches.count(RESTORE) >= 1
        assert set(self.ended_in) == {ENGINE_MODE}


async def test_the_block_runs_with_auto_and_the_transaction_gets_the_engines_mode_back(db_url):
    db = Database(db_url)
    trace = Trace(db)
    try:
        async with db.write() as c:
            if db.dialect == "postgresql":
                show = "SHOW plan_cache_mode"
                assert (await c.exec_driver_sql(show)).scalar() == ENGINE_MODE
            async with reuse_key_check_plans(c):
                if db.dialect == "postgresql":
                    assert (await c.exec_driver_sql(show)).scalar() == "auto"
            if db.dialect == "postgresql":
                assert (await c.exec_driver_sql(show)).scalar() == ENGINE_MODE
                # a block that fails inside a savepoint: its rollback undoes the SET LOCAL
                with pytest.raises(ZeroDivisionError):
                    async with c.begin_nested():
                        async with reuse_key_check_plans(c):
                            assert (await c.exec_driver_sql(show)).scalar() == "auto"
                            1 / 0  # noqa: B018
                assert (await c.exec_driver_sql(show)).scalar() == ENGINE_MODE
        if db.dialect != "postgresql":
            assert [s for s, _ in trace.ran if "plan_cache_mode" in s] == []
    finally:
        trace.close()
        await db.dispose()


async def test_bulk_writes_reuse_key_check_plans_and_nothing_else_does(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        db = app.state.runtime.db
        trace = Trace(db)
        try:
            # a conversation and its messages
            cid = (await new_conv(c))["id"]
            for i in range(4):
                await say(c, cid, f"m{i}", role=("user", "assistant")[i % 2])
            trace.start()
            assert (await c.delete(f"/api/conversations/{cid}")).status_code == 204
            trace.check(db, {"DELETE FROM conversations"})
            assert await count(app, t.messages, t.messages.c.conversation_id == cid) == 0

            # a fork (the existing case, now through the shared helper)
            cid = (await new_conv(c))["id"]
            for i in range(4):
                await say(c, cid, f"f{i}", role=("user", "assistant")[i % 2])
            trace.start()
            fork = (await c.post(f"/api/conversations/{cid}/fork", json={})).json()
            await forks.copies_done()  # the copy runs after the answer (conversations/forks.py)
            trace.check(db, {"INSERT INTO messages"})
            assert await count(app, t.messages, t.messages.c.conversation_id == fork["id"]) == 4

            # an agent with its conversations
            agent = (await c.post("/api/agents", json={"name": "Mika", "handle": "mika"})).json()
            acid = (await new_conv(c, agent_id=agent["id"]))["id"]
            await say(c, acid, "hello agent")
            trace.start()
            assert (await c.delete(f"/api/agents/{agent['id']}")).status_code == 204
            trace.check(db, {"DELETE FROM agents"})
            assert await count(app, t.messages, t.messages.c.conversation_id == acid) == 0

            # a workspace with its conversations
            wid = (await c.post("/api/workspaces", json={"name": "team"})).json()["id"]
            wcid = (await new_conv(c, workspace_id=wid))["id"]
            await say(c, wcid, "hello team")
            trace.start()
            assert (await c.delete(f"/api/workspaces/{wid}")).status_code == 204
            trace.check(
                db,
                {
                    "DELETE FROM conversations",
                    "DELETE FROM projects",
                    "DELETE FROM memories",
                    "DELETE FROM workspaces",
                },
            )
            assert await count(app, t.messages, t.messages.c.conversation_id == wcid) == 0

            # an import: its message inserts
            trace.start()
            rep = await import_file(app, c, DATA / "chatgpt.json")
            assert rep["status"] == "done" and rep["report"]["messages"] == {"imported": 14}, rep
            trace.check(db, {"INSERT INTO messages"})

            # the account, with everything left in it
            trace.start()
            r = await c.request("DELETE", "/api/account", json={"confirm": c.email})
            assert r.status_code == 200, r.text
            trace.check(db, {"DELETE FROM conversations", "DELETE FROM users"})
            async with db.read() as conn:
                q = select(t.messages.c.id).where(t.messages.c.user_id == c.user_id)
                assert (await conn.execute(q)).first() is None
        finally:
            trace.close()

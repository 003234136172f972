"""Database faults (issue 10): what is transient (real driver errors on both databases), a turn's
final write that finds its row swept as interrupted puts the finished answer back, and — against
a real ``chatmem serve`` on PostgreSQL whose connections are killed with ``pg_terminate_backend``
mid-turn — every finished answer is saved whole, nobody sees a 500 or driver text, and the server
serves normally as soon as the database is back."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import asyncpg
import httpx
import pytest
from sqlalchemy import insert, text

from chatmem.db import engine as engine_mod
from chatmem.db import faults
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.generation.finalize import end_orphan
from chatmem.generation.sse import parse
from tests.servers import Server, create_user
from tests.test_generation import client_for, deltas, new_conv, running_app, stream, until

DRIVER_TEXT = ("sqlalchemy", "asyncpg", "Traceback", "terminating connection", "(Background")


async def _raised(db: Database, sql: str) -> BaseException:
    try:
        async with db.write() as c:
            await c.exec_driver_sql(sql)
    except Exception as e:
        return e
    raise AssertionError(f"{sql!r} did not fail")


async def test_transient_errors_are_told_apart(db_url):
    db = Database(db_url)
    try:
        if db.sqlite:
            path = db_url.split("///", 1)[1]
            locker = sqlite3.connect(path, timeout=0)
            locker.execute("BEGIN IMMEDIATE")
            other = sqlite3.connect(path, timeout=0)
            try:
                with pytest.raises(sqlite3.OperationalError) as locked:
                    other.execute("DELETE FROM users WHERE id = 'x'")
            finally:
                locker.rollback()
                locker.close()
                other.close()
            assert "locked" in str(locked.value) and faults.is_transient(locked.value)
        else:
            serialization = await _raised(
                db, "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '40001'; END $$"
            )
            deadlock = await _raised(
                db, "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '40P01'; END $$"
            )
            killed = await _raised(db, "SELECT pg_terminate_backend(pg_backend_pid())")
            for e in (serialization, deadlock, killed):
                assert faults.is_transient(e), repr(e)
                err = faults.api_error(e)
                assert err.status == 503 and err.code == "database_unavailable"
                assert not any(d in err.message for d in DRIVER_TEXT)
        row = dict(id="u_dup", email="dup@example.com", created_at=1, updated_at=1)
        async with db.write() as c:
            await c.execute(insert(t.users).values(**row))
        dup = None
        try:
            async with db.write() as c:
                await c.execute(insert(t.users).values(**row))
        except Exception as e:
            dup = e
        assert dup is not None and not faults.is_transient(dup)  # a constraint: a bug, no retry
        assert not faults.is_transient(ValueError("x"))
        async with db.read() as c:  # the pool recovered from the killed connection
            assert (await c.execute(text("SELECT 1"))).scalar() == 1
    finally:
        await db.dispose()


async def test_retrying_repeats_only_transient_failures():
    calls = []

    async def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionResetError("reset by peer")
        return "ok"

    assert await faults.retrying(flaky, what="t", base_s=0.001) == "ok" and len(calls) == 3

    async def broken():
        calls.append(1)
        raise ValueError("a bug")

    calls.clear()
    with pytest.raises(ValueError):
        await faults.retrying(broken, what="t", base_s=0.001)
    assert len(calls) == 1


async def test_a_finished_answer_reclaims_a_row_swept_while_the_db_was_away(db_url):
    """The sweeper of another replica ended the row as interrupted (the turn's heartbeat could
    not reach the database); when the turn finishes, its whole answer replaces the partial one
    and the event log reads 1..n ending in ``done``. (The heartbeat polls rarely here: it
    would notice the lost lease and stop an unfinished answer, which is right for one.)"""
    async with running_app(db_url, stop_poll_ms=60_000) as application:
        rt = application.state.runtime
        async with client_for(application) as c:
            cid = await new_conv(c)
            r = await c.post(
                f"/api/conversations/{cid}/messages", json={"content": "hi", "model": "slow"}
            )
            mid = r.json()["assistant_message_id"]
            runner = rt.generation.runners[mid]

            async def flushed():
                return runner.live.flushed >= 2

            await until(flushed)
            async with rt.db.write() as conn:
                assert await end_orphan(conn, mid, stopped=False) is not None
            application.state.gated.gate.set()

            async def complete():
                m = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
                return m["status"] == "complete"

            await until(complete)
            msg = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()
            events = await stream(c, cid, mid)
    assert msg["text"] == "first second" and msg["error"] == "" and msg["stop_reason"] == "end_turn"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "done" and deltas(events) == "first second"
    assert not [e for e in events if e["type"] == "error"]


# ── a real server whose PostgreSQL connections are killed mid-turn ─────────────────────────────

TURNS = 4
ENV = {
    "CHATMEM_DEMO_DELAY_MS": "4",
    "CHATMEM_DEMO_MIN_TOKENS": "500",
    "CHATMEM_DEFAULT_MODEL": "demo",
    "CHATMEM_LEASE_TTL_S": "6",
    "CHATMEM_MAX_CONCURRENT_TURNS": "10",
}


def _pg_dsn(db_url: str) -> str:
    return db_url.replace("postgresql+asyncpg://", "postgresql://")


async def _killer(dsn: str, stop: threading.Event, kills: list[int]) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        while not stop.is_set():
            n = await conn.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            kills.append(n)
            await asyncio.sleep(0.15)
    finally:
        await conn.close()


def _json_ok_or_503(r: httpx.Response) -> None:
    assert r.status_code != 500 and r.status_code < 600, r.text
    if r.status_code == 503:
        body = r.json()
        assert body["error"]["code"] == "database_unavailable", body
        assert r.headers.get("retry-after") == "1"
        assert not any(d in r.text for d in DRIVER_TEXT), r.text
    else:
        assert r.status_code in (200, 201, 202, 204), r.text


def _retry(fn, tries: int = 200):
    for _ in range(tries):
        r = fn()
        _json_ok_or_503(r)
        if r.status_code != 503:
            return r
        time.sleep(0.05)
    raise AssertionError("the database never came back")


def _follow(c: httpx.Client, cid: str, mid: str, out: dict) -> None:
    """Read the whole stream from the server's memory (retrying its ownership check)."""
    url = f"/api/conversations/{cid}/messages/{mid}/stream"
    for _ in range(200):
        with c.stream("GET", url) as r:
            if r.status_code == 503:
                time.sleep(0.05)
                continue
            assert r.status_code == 200, r.read()
            out[mid] = parse(r.read().decode())
            return


@pytest.mark.slow
def test_killing_the_servers_database_connections_mid_turn(db_url):
    if not db_url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    key = create_user(db_url, "faults@example.com")
    server = Server(db_url, env_extra=ENV).start()
    stop, kills, statuses = threading.Event(), [], []
    try:
        with httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {key}"}, timeout=120
        ) as c:
            turns = []
            for i in range(TURNS):
                cid = c.post("/api/conversations", json={}).json()["id"]
                r = c.post(f"/api/conversations/{cid}/messages", json={"content": f"story {i}"})
                assert r.status_code == 202, r.text
                turns.append((cid, r.json()["assistant_message_id"]))
            streamed: dict = {}
            followers = [
                threading.Thread(target=_follow, args=(c, cid, mid, streamed)) for cid, mid in turns
            ]
            for f in followers:
                f.start()
            killer = threading.Thread(
                target=asyncio.run, args=(_killer(_pg_dsn(db_url), stop, kills),)
            )
            killer.start()
            deadline = time.monotonic() + 8  # kill through the turns' ends
            while time.monotonic() < deadline:
                r = c.get("/api/conversations")
                _json_ok_or_503(r)
                statuses.append(r.status_code)
                time.sleep(0.02)
            stop.set()
            killer.join()
            for f in followers:
                f.join(timeout=120)
            assert sum(kills) > 0, "no connection was ever killed"
            # every finished answer is saved whole: the row's text is what was streamed
            for cid, mid in turns:
                url = f"/api/conversations/{cid}/messages/{mid}"
                msg = _retry(lambda u=url: c.get(u)).json()
                for _ in range(600):
                    if msg["status"] != "streaming":
                        break
                    time.sleep(0.05)
                    msg = _retry(lambda u=url: c.get(u)).json()
                events = streamed[mid]
                assert events[-1]["type"] == "done", events[-1]
                assert msg["status"] == "complete" and msg["stop_reason"] == "end_turn", msg
                assert msg["text"] == deltas(events) and len(msg["text"]) > 200
                assert msg["error"] == ""
                full = parse(_retry(lambda u=url: c.get(u + "/stream")).text)
                assert [e["seq"] for e in full] == list(range(1, len(full) + 1))
                assert deltas(full) == msg["text"] and full[-1]["type"] == "done"
            # the branch is free at once (no 409 until a lease expires) and nothing is a 500
            for cid, _ in turns:
                r = _retry(
                    lambda u=f"/api/conversations/{cid}/messages": c.post(
                        u, json={"content": "next", "generate": False}
                    )
                )
                assert r.status_code == 201, r.text
            burst = [c.get("/api/conversations").status_code for _ in range(50)]
            assert burst == [200] * 50, burst
    finally:
        stop.set()
        server.stop()
    assert 500 not in statuses


async def test_a_pooled_connection_the_server_closed_is_replaced_at_checkout(db_url):
    """A connection killed while it sat in the pool is found at checkout — by the transaction's
    BEGIN, sent again on a new connection (engine.py; there is no pre-ping since session 3) —
    and the pool opens a new one: the caller sees no error."""
    if not db_url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    db = Database(db_url)
    try:
        async with db.read() as c:
            pid = (await c.execute(text("SELECT pg_backend_pid()"))).scalar()
        killer = await asyncpg.connect(_pg_dsn(db.url))
        try:
            assert await killer.fetchval("SELECT pg_terminate_backend($1)", pid)
        finally:
            await killer.close()
        await asyncio.sleep(0.2)
        async with db.read() as c:
            assert (await c.execute(text("SELECT pg_backend_pid()"))).scalar() != pid
    finally:
        await db.dispose()


# ── no pre-ping: a transaction's BEGIN checks the pooled connection (engine._first_trip) ──────


async def _kill(dsn: str, pids: list[int]) -> None:
    """Terminate ``pids``' backends and wait until each has exited (PostgreSQL 14+)."""
    killer = await asyncpg.connect(dsn)
    try:
        for pid in pids:
            assert await killer.fetchval("SELECT pg_terminate_backend($1, 10000)", pid)
    finally:
        await killer.close()


async def _pooled(db: Database, n: int) -> list:
    """Open ``n`` pooled connections at once; their asyncpg connections."""
    conns: list = []
    hold = asyncio.Event()

    async def one() -> None:
        async with db.read() as c:
            await c.execute(text("SELECT 1"))
            conns.append(c.sync_connection.connection.dbapi_connection._connection)
            await hold.wait()

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    while len(conns) < n:
        await asyncio.sleep(0.01)
    hold.set()
    await asyncio.gather(*tasks)
    return conns


def test_killing_a_servers_pooled_connections_costs_no_request(db_url):
    """Every pooled connection of a real ``chatmem serve`` killed while idle (a restart, an
    idle-session timeout): the next requests — a read, a lone write outside a transaction, a
    write transaction, the health check — all answer normally, none is a 503 (no pre-ping)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    key = create_user(db_url, "pooled@example.com")
    server = Server(db_url, env_extra=ENV).start()
    dsn = _pg_dsn(db_url)
    try:
        with httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as c:
            cid = c.post("/api/conversations", json={}).json()["id"]
            for round_ in range(3):
                pids = asyncio.run(_server_pids(dsn))
                assert pids, "the server holds no connection"
                asyncio.run(_kill(dsn, pids))
                answers = [
                    c.get("/api/conversations").status_code,
                    c.post("/api/conversations", json={}).status_code,
                    c.post(
                        f"/api/conversations/{cid}/messages",
                        json={"content": f"round {round_}", "generate": False},
                    ).status_code,
                    c.get("/api/health").status_code,
                ]
                assert answers == [200, 201, 201, 200], answers
                assert not set(pids) & set(asyncio.run(_server_pids(dsn)))
    finally:
        server.stop()


async def _server_pids(dsn: str) -> list[int]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        return [r["pid"] for r in rows]
    finally:
        await conn.close()


async def test_a_transaction_on_a_connection_dead_unnoticed_begins_on_a_new_one(db_url):
    """The backends die while the event loop is busy, so asyncpg has not seen them close: a
    transaction's BEGIN fails as a disconnect and is sent again on a new connection — the
    caller sees nothing. A lone statement outside a transaction on a connection idle for
    ``PING_AFTER_IDLE_S`` is pinged first and also succeeds; one on a connection in steady
    use is not pinged, and fails as a 503 ``database_unavailable`` (the documented trade)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    db = Database(db_url)
    dsn = _pg_dsn(db.url)

    def kill_all_blocking() -> None:  # the loop does not run meanwhile: no close is noticed
        def kill() -> None:
            asyncio.run(_kill(dsn, asyncio.run(_server_pids(dsn))))

        killer = threading.Thread(target=kill)
        killer.start()
        killer.join()

    try:
        old = await _pooled(db, 2)
        kill_all_blocking()
        assert not any(c.is_closed() for c in old)
        async with db.write() as c:
            await c.execute(
                insert(t.users).values(id="u_k", email="k@x", created_at=1, updated_at=1)
            )
            pid = (await c.execute(text("SELECT pg_backend_pid()"))).scalar()
        assert pid not in {c.get_server_pid() for c in old}

        await _pooled(db, 2)  # steady use: a lone statement is not pinged
        kill_all_blocking()
        with pytest.raises(Exception) as lone:
            async with db.write_once() as c:
                await c.execute(text("UPDATE users SET updated_at = 2 WHERE id = 'u_k'"))
        err = faults.api_error(lone.value)
        assert err is not None and err.code == "database_unavailable"

        await _pooled(db, 2)
        kill_all_blocking()
        engine_mod.PING_AFTER_IDLE_S, saved = 0.0, engine_mod.PING_AFTER_IDLE_S  # "idle"
        try:
            async with db.write_once() as c:
                await c.execute(text("UPDATE users SET updated_at = 3 WHERE id = 'u_k'"))
        finally:
            engine_mod.PING_AFTER_IDLE_S = saved
        async with db.read_once() as c:
            stored = await c.execute(text("SELECT updated_at FROM users WHERE id = 'u_k'"))
            assert stored.scalar() == 3
    finally:
        await db.dispose()


async def test_a_begin_cancelled_in_flight_does_not_pool_its_connection(db_url, monkeypatch):
    """Cancelled with its BEGIN sent and unanswered, a block's connection is closed, not
    pooled: the server may have begun a transaction nobody would end, which would hold a later
    lone write uncommitted (invisible to everyone else, lost with the connection)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("asyncpg's")
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection as Adapt

    db = Database(db_url, pool_size=1)
    try:
        async with db.read() as c:  # one pooled connection
            await c.execute(text("SELECT 1"))
        original = Adapt._start_transaction

        async def cancelled_in_flight(self):
            begin = asyncio.ensure_future(original(self))
            await asyncio.sleep(0)  # BEGIN written, its answer not read yet
            begin.cancel()
            raise asyncio.CancelledError

        monkeypatch.setattr(Adapt, "_start_transaction", cancelled_in_flight)
        with pytest.raises(asyncio.CancelledError):
            async with db.write() as c:
                pass
        monkeypatch.setattr(Adapt, "_start_transaction", original)
        async with db.write_once() as c:
            await c.execute(
                insert(t.users).values(id="u_c", email="c@x", created_at=1, updated_at=1)
            )
        other = await asyncpg.connect(_pg_dsn(db.url))
        try:
            assert await other.fetchval("SELECT count(*) FROM users WHERE id = 'u_c'") == 1
        finally:
            await other.close()
        async with db.write() as c:  # and a transaction begins normally
            await c.execute(text("SELECT 1"))
    finally:
        await db.dispose()

"""Metrics, request ids, structured logs and readiness, end to end on SQLite and PostgreSQL.

A real turn runs on the demo provider; ``/metrics`` is parsed with prometheus_client's own
parser, so a renamed metric or a raw-path label fails here (and the dashboard test).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select, update

from chatmem.app import create_app
from chatmem.db import schema as t
from chatmem.jobs.queue import enqueue
from chatmem.observability import logs
from tests.conftest import make_settings
from tests.servers import free_port

TOKEN = "metrics-s3cret"


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, metrics_token=TOKEN, worker_heartbeat_s=0.2)


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(got: dict, name: str, **labels) -> float:
    return got.get((name, frozenset(labels.items())), 0.0)


async def scrape(client) -> dict:
    r = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return samples(r.text)


async def finished_turn(client, cid: str, mid: str) -> dict:
    for _ in range(500):
        m = (await client.get(f"/api/conversations/{cid}/messages/{mid}")).json()
        if m["status"] != "streaming":
            return m
        await asyncio.sleep(0.02)
    raise AssertionError("the turn never finished")


async def run_turn(u) -> tuple[str, dict, httpx.Response]:
    cid = (await u.client.post("/api/conversations", json={})).json()["id"]
    r = await u.client.post(f"/api/conversations/{cid}/messages", json={"content": "hi there"})
    assert r.status_code == 202, r.text
    msg = await finished_turn(u.client, cid, r.json()["assistant_message_id"])
    assert msg["status"] == "complete"
    return cid, msg, r


async def test_metrics_need_the_token(anon):
    assert (await anon.get("/metrics")).status_code == 401
    r = await anon.get("/metrics", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


async def test_metrics_are_not_served_without_a_token(db_url):
    application = create_app(make_settings(db_url))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            r = await c.get("/metrics", headers={"Authorization": "Bearer "})
            assert r.status_code == 404


async def test_turn_http_job_and_pool_metrics(new_user, app):
    u = await new_user()
    cid, msg, _ = await run_turn(u)
    await u.client.get(f"/api/conversations/{cid}/messages/no-such-message")
    got = await scrape(u.client)
    demo = {"provider": "demo", "model": "demo"}
    assert value(got, "chatmem_turns_started_total", **demo) == 1
    assert value(got, "chatmem_turns_finished_total", outcome="complete", **demo) == 1
    assert value(got, "chatmem_turn_first_token_seconds_count", **demo) == 1
    assert value(got, "chatmem_turn_duration_seconds_count", **demo) == 1
    out_tokens = value(got, "chatmem_turn_tokens_total", direction="output", **demo)
    assert out_tokens == msg["usage"]["output_tokens"] > 0
    assert value(got, "chatmem_turn_tokens_total", direction="input", **demo) > 0
    assert ("chatmem_turn_cost_usd_total", frozenset(demo.items())) in got
    # route templates, never raw paths (bounded label values)
    route = "/api/conversations/{cid}/messages"
    assert value(got, "chatmem_http_requests_total", method="POST", route=route, status="202") == 1
    one = "/api/conversations/{cid}/messages/{mid}"
    assert value(got, "chatmem_http_requests_total", method="GET", route=one, status="404") == 1
    assert not any(cid in str(labels) for _, labels in got)
    assert value(got, "chatmem_http_request_duration_seconds_count", method="POST", route=route)
    # the turn's follow-up jobs are in the queue gauges (or already run by the worker)
    jobs = {
        dict(labels)["kind"]
        for name, labels in got
        if name in ("chatmem_jobs", "chatmem_job_runs_total") and "kind" in dict(labels)
    }
    assert "title" in jobs, jobs
    assert ("chatmem_jobs_oldest_due_age_seconds", frozenset({("kind", "title")})) in got
    assert value(got, "chatmem_workers_alive") >= 1
    assert value(got, "chatmem_db_pool_size") >= 1
    assert ("chatmem_db_pool_checked_out", frozenset()) in got
    assert value(got, "chatmem_turns_running") == 0


async def test_job_runs_and_failures_are_counted(new_user, app):
    rt = app.state.runtime
    calls = []

    async def flaky(_rt, payload):
        calls.append(payload)
        raise RuntimeError("boom")

    rt.job_handlers["test.flaky"] = flaky
    async with rt.db.write() as c:
        await enqueue(c, "test.flaky", {"n": 1}, max_attempts=1)
    u = await new_user()
    for _ in range(300):
        got = await scrape(u.client)
        if value(got, "chatmem_job_runs_total", kind="test.flaky", outcome="failed"):
            break
        await asyncio.sleep(0.02)
    got = await scrape(u.client)  # the queue gauges are read before the counters: scrape again
    assert value(got, "chatmem_job_runs_total", kind="test.flaky", outcome="failed") == 1
    assert value(got, "chatmem_job_duration_seconds_count", kind="test.flaky") == 1
    assert value(got, "chatmem_job_lag_seconds_count", kind="test.flaky") == 1
    assert value(got, "chatmem_jobs", kind="test.flaky", status="failed") == 1


async def test_request_ids_in_headers_error_bodies_and_the_rpc_envelope(new_user, anon):
    u = await new_user()
    r = await u.client.get("/api/conversations")
    rid = r.headers["x-request-id"]
    assert rid.startswith("req_")
    r = await u.client.get("/api/conversations", headers={"X-Request-ID": "lb-1234.abc"})
    assert r.headers["x-request-id"] == "lb-1234.abc"  # a proxy's id carries through
    r = await u.client.get("/api/conversations", headers={"X-Request-ID": "bad id\twith spaces"})
    assert r.headers["x-request-id"].startswith("req_")
    r = await u.client.get("/api/conversations/nope", headers={"X-Request-ID": "trace-42"})
    assert r.status_code == 404
    assert r.json() == {
        "error": {"code": "not_found", "message": r.json()["error"]["message"], "details": None},
        "request_id": "trace-42",
    }
    r = await anon.get("/api/conversations")  # 401 from a dependency
    assert r.json()["request_id"] == r.headers["x-request-id"]
    r = await anon.get("/no/such/route")  # 404 before any route
    assert r.json()["request_id"] == r.headers["x-request-id"]
    r = await u.client.post("/api/conversations", content=b"x" * (3 * 1024 * 1024))
    assert r.status_code == 413 and r.json()["request_id"] == r.headers["x-request-id"]
    # /rpc keeps its envelope: the same id is its meta.requestId
    r = await u.client.get("/rpc/agents", headers={"X-Request-ID": "rpc-7"})
    assert r.headers["x-request-id"] == "rpc-7"
    assert r.json()["meta"]["requestId"] == "rpc-7" and "request_id" not in r.json()


async def test_an_unhandled_error_is_a_json_500_with_its_request_id(app, anon):
    async def boom():
        raise RuntimeError("kaboom")

    app.add_api_route("/api/test-boom", boom)
    r = await anon.get("/api/test-boom")
    assert r.status_code == 500
    body = r.json()
    assert body["error"]["code"] == "internal_error" and "kaboom" not in r.text
    assert body["request_id"] == r.headers["x-request-id"]


@pytest.fixture
def log_lines():
    """The process's log records as JSON lines (the formatter `chatmem serve` installs)."""
    buf = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    logs.configure("info", "json", stream=buf)
    yield lambda: [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved[0]:
        root.addHandler(h)
    root.setLevel(saved[1])


async def test_one_json_line_per_request_and_per_turn(new_user, log_lines):
    u = await new_user()
    cid, msg, post = await run_turn(u)
    lines = log_lines()
    reqs = [x for x in lines if x.get("logger") == logs.HTTP_LOGGER and x["msg"] == "request"]
    posted = next(x for x in reqs if x["method"] == "POST" and x["status"] == 202)
    assert posted["request_id"] == post.headers["x-request-id"]
    assert posted["route"] == "/api/conversations/{cid}/messages"
    assert posted["path"] == f"/api/conversations/{cid}/messages"
    assert posted["level"] == "info" and posted["ts"] and posted["duration_ms"] >= 0
    turns = [x for x in lines if x.get("logger") == logs.TURN_LOGGER]
    assert len(turns) == 1
    turn = turns[0]
    assert turn["msg"] == "turn finished" and turn["outcome"] == "complete"
    assert turn["conversation_id"] == cid and turn["message_id"] == msg["id"]
    assert turn["model"] == "demo" and turn["provider"] == "demo" and turn["user_id"] == u.id
    assert turn["output_tokens"] == msg["usage"]["output_tokens"] and turn["input_tokens"] > 0
    assert turn["first_token_ms"] is not None and turn["duration_ms"] >= turn["first_token_ms"]
    # the turn was started by that request: its line carries the request's id
    assert turn["request_id"] == post.headers["x-request-id"]


async def test_ready_when_database_migrations_and_a_worker_are_fine(app, anon):
    for _ in range(100):  # the in-process worker's first heartbeat
        r = await anon.get("/api/ready")
        if r.status_code == 200:
            break
        await asyncio.sleep(0.05)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True
    assert set(body["checks"]) == {"database", "migrations", "workers"}
    assert "1 alive" in body["checks"]["workers"]["detail"]
    health = await anon.get("/api/health")
    assert health.status_code == 200 and health.json()["ok"] is True


async def test_not_ready_without_a_worker_or_with_an_old_schema(db_url):
    application = create_app(make_settings(db_url, run_worker=False))
    async with application.router.lifespan_context(application):
        rt = application.state.runtime
        async with rt.db.write() as c:
            await c.execute(t.workers.delete())
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            r = await c.get("/api/ready")
            assert r.status_code == 503, r.text
            checks = r.json()["checks"]
            assert checks["workers"]["ok"] is False and "0 alive" in checks["workers"]["detail"]
            assert checks["database"]["ok"] and checks["migrations"]["ok"]
            async with rt.db.write() as conn:
                old = (
                    await conn.exec_driver_sql("SELECT version_num FROM alembic_version")
                ).scalar()
                await conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0001'")
            try:
                r = await c.get("/api/ready")
                assert r.status_code == 503
                assert "at 0001, expected" in r.json()["checks"]["migrations"]["detail"]
            finally:
                async with rt.db.write() as conn:
                    await conn.exec_driver_sql(f"UPDATE alembic_version SET version_num = '{old}'")
    application = create_app(make_settings(db_url, run_worker=False, ready_worker_max_age_s=0))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            r = await c.get("/api/ready")
            assert r.status_code == 200 and r.json()["checks"]["workers"]["detail"] == "not checked"


async def test_not_ready_when_the_database_is_unreachable(tmp_path):
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/nothing"
    application = create_app(make_settings(url, run_worker=False))
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        r = await c.get("/api/ready")
    assert r.status_code == 503
    assert r.json()["checks"]["database"]["ok"] is False
    await application.state.runtime.db.dispose()


async def test_worker_heartbeat_rows_come_and_go(db_url):
    application = create_app(make_settings(db_url, worker_heartbeat_s=0.1))
    rt = application.state.runtime
    async with application.router.lifespan_context(application):
        for _ in range(100):
            async with rt.db.read() as c:
                rows = (await c.execute(select(t.workers))).all()
            if rows:
                break
            await asyncio.sleep(0.02)
        assert len(rows) == 1 and "title" in rows[0].kinds
        first = rows[0].seen_at
        await asyncio.sleep(0.3)
        async with rt.db.read() as c:
            assert (await c.execute(select(t.workers.c.seen_at))).scalar() > first
        worker_id = rows[0].id
        async with rt.db.write() as c:  # a stale row of a dead worker does not count
            await c.execute(
                t.workers.insert().values(
                    id="dead:1:x", host="dead", pid=1, kinds=[], started_at=1, seen_at=1
                )
            )
    db = rt.db.__class__(db_url)
    try:
        async with db.read() as c:
            ids = [r.id for r in (await c.execute(select(t.workers.c.id))).all()]
        assert worker_id not in ids  # a clean stop removes its row
        async with db.write() as c:
            await c.execute(update(t.workers).values(seen_at=1))
            await c.execute(t.workers.delete())
    finally:
        await db.dispose()


async def test_admin_listener_serves_metrics_health_and_ready(db_url):
    port = free_port()
    application = create_app(make_settings(db_url, admin_listen=f"127.0.0.1:{port}"))
    async with application.router.lifespan_context(application):
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as c:
            r = await c.get("/metrics")  # no token: a private address
            assert r.status_code == 200 and "chatmem_workers_alive" in r.text
            assert (await c.get("/api/health")).json()["ok"] is True
            for _ in range(100):
                r = await c.get("/api/ready")
                if r.status_code == 200:
                    break
                await asyncio.sleep(0.05)
            assert r.status_code == 200, r.text
    with pytest.raises(httpx.ConnectError):  # stopped with the app
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_tracebacks_never_carry_local_variables(log_lines):
    """Locals hold message text and the settings (provider keys): never logged (issue 10)."""
    secret = "sk-live-do-not-log-me"  # noqa: F841 - the local a traceback would show

    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("chatmem.test").exception("failed")
    (line,) = [x for x in log_lines() if x.get("logger") == "chatmem.test"]
    assert line["exception"][0]["exc_value"] == "boom"
    assert "do-not-log-me" not in json.dumps(line)
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logs.formatter("text"))
    try:
        raise ValueError("boom")
    except ValueError:
        rec = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
        handler.emit(rec)
    assert "ValueError: boom" in buf.getvalue() and "do-not-log-me" not in buf.getvalue()

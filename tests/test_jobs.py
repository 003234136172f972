"""The database job queue: dedupe, exclusive claims, retries, failures, visibility timeout, worker."""

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from chatmem.app import create_runtime
from chatmem.db.engine import Database
from chatmem.jobs import worker as wk
from chatmem.jobs.queue import Permanent, enqueue

from .conftest import make_settings
from .ctx_helpers import job_rows

CALLS: dict[str, list] = {}


async def _ok(rt, payload):
    CALLS.setdefault(payload["tag"], []).append("ok")


async def _flaky(rt, payload):
    seen = CALLS.setdefault(payload["tag"], [])
    seen.append("try")
    if len(seen) < payload["fail_times"]:
        raise RuntimeError(f"flaky failure {len(seen)}")


async def _broken(rt, payload):
    raise (Permanent if payload.get("permanent") else ValueError)("it is broken")


#: registered on each test runtime, as the composition root registers the real kinds
TEST_HANDLERS = {"test.ok": _ok, "test.flaky": _flaky, "test.broken": _broken}


@pytest.fixture(autouse=True)
def _fresh_calls():
    CALLS.clear()


@pytest.fixture
async def rt(db_url):
    runtime = create_runtime(
        make_settings(db_url, job_backoff_s=0.001, job_backoff_max_s=0.01),
        db=Database(db_url),
    )
    runtime.job_handlers.update(TEST_HANDLERS)
    yield runtime
    await runtime.db.dispose()


async def put(db, kind, payload, **kw):
    async with db.write() as c:
        return await enqueue(c, kind, payload, **kw)


async def drain(w: wk.Worker, limit: int = 50) -> list[dict]:
    """Run jobs until none is due (retries are due after a few ms of backoff)."""
    out = []
    idle = 0
    while len(out) < limit and idle < 200:
        job = await w.run_once()
        if job is None:
            idle += 1
            await asyncio.sleep(0.005)
            if not await job_rows(w.rt.db) or all(
                j["status"] in ("done", "failed") for j in await job_rows(w.rt.db)
            ):
                break
        else:
            out.append(job)
    return out


async def test_dedupe_key_collapses_while_queued(rt):
    a = await put(rt.db, "test.ok", {"tag": "d"}, dedupe_key="k1")
    assert a and await put(rt.db, "test.ok", {"tag": "d"}, dedupe_key="k1") is None
    assert await put(rt.db, "test.ok", {"tag": "d"}, dedupe_key="k2")
    job = await wk.claim(rt.db, "w1", visibility_ms=60_000, kinds=["test.ok"])
    assert job["id"] == a
    # once the first one runs, the same key may be queued again (it would see newer data)
    assert await put(rt.db, "test.ok", {"tag": "d"}, dedupe_key="k1")


async def test_the_idle_probe_sees_only_due_jobs_of_the_workers_kinds(rt):
    """``claim``'s first read (one statement built once, ``kinds`` bound as a list) finds a job
    only when one of the asked kinds is due: a later job or another kind leaves it idle."""
    later = await put(rt.db, "test.ok", {"tag": "later"}, delay_ms=3_600_000)
    other = await put(rt.db, "test.flaky", {"tag": "other"})
    assert await wk.claim(rt.db, "w", visibility_ms=60_000, kinds=["test.ok"]) is None
    assert await wk.claim(rt.db, "w", visibility_ms=60_000, kinds=[]) is None
    job = await wk.claim(rt.db, "w", visibility_ms=60_000, kinds=["test.ok", "test.flaky"])
    assert job["id"] == other
    assert await wk.claim(rt.db, "w", visibility_ms=60_000) is None  # ``later`` is not due
    assert later and [r["status"] for r in await job_rows(rt.db)].count("queued") == 1


async def test_concurrent_enqueues_of_one_key_leave_one_job(db_url, rt):
    other = Database(db_url)
    try:
        ids = await asyncio.gather(
            *[put(d, "test.ok", {"tag": "x"}, dedupe_key="same") for d in (rt.db, other) * 4]
        )
    finally:
        await other.dispose()
    assert len([i for i in ids if i]) == 1 and len(await job_rows(rt.db)) == 1


async def test_each_job_is_claimed_by_exactly_one_worker(db_url, rt):
    for i in range(30):
        await put(rt.db, "test.ok", {"tag": f"c{i}"})
    other = Database(db_url)  # a second replica
    try:

        async def grab(db, name):
            got = []
            while job := await wk.claim(db, name, visibility_ms=60_000, kinds=["test.ok"]):
                got.append(job["id"])
            return got

        results = await asyncio.gather(
            *[grab(d, f"w{i}") for i, d in enumerate([rt.db, other, rt.db, other])]
        )
    finally:
        await other.dispose()
    claimed = [j for r in results for j in r]
    assert len(claimed) == 30 and len(set(claimed)) == 30
    rows = await job_rows(rt.db)
    assert all(r["status"] == "running" and r["attempts"] == 1 and r["locked_by"] for r in rows)


async def test_retries_with_backoff_then_succeeds(rt):
    jid = await put(rt.db, "test.flaky", {"tag": "flaky", "fail_times": 3})
    w = wk.Worker(rt, kinds=["test.flaky"])
    first = await w.run_once()
    assert first["id"] == jid and first["outcome"] == "queued"
    [row] = await job_rows(rt.db)
    assert (
        row["status"] == "queued"
        and row["attempts"] == 1
        and "flaky failure 1" in row["last_error"]
    )
    assert row["run_after"] - row["updated_at"] == wk.backoff_ms(1, 0.001, 0.01)
    await drain(w)
    [row] = await job_rows(rt.db)
    assert row["status"] == "done" and row["attempts"] == 3 and row["last_error"] == ""
    assert CALLS["flaky"] == ["try", "try", "try"]


def test_backoff_is_exponential_and_capped():
    assert [wk.backoff_ms(n, 2.0, 300.0) for n in (1, 2, 3, 4)] == [2000, 4000, 8000, 16000]
    assert wk.backoff_ms(30, 2.0, 300.0) == 300_000


async def test_failed_jobs_are_kept_with_their_error(rt):
    retried = await put(rt.db, "test.broken", {}, max_attempts=2)
    permanent = await put(rt.db, "test.broken", {"permanent": True})
    w = wk.Worker(rt, kinds=["test.broken"])
    await drain(w)
    rows = {r["id"]: r for r in await job_rows(rt.db)}
    assert rows[retried]["status"] == "failed" and rows[retried]["attempts"] == 2
    assert "ValueError: it is broken" in rows[retried]["last_error"]
    assert rows[permanent]["status"] == "failed" and rows[permanent]["attempts"] == 1
    assert "Permanent: it is broken" in rows[permanent]["last_error"]


async def test_unknown_kind_fails_permanently(rt):
    jid = await put(rt.db, "test.nobody-handles-this", {})
    w = wk.Worker(rt, kinds=["test.nobody-handles-this"])
    job = await w.run_once()
    assert job["id"] == jid and job["outcome"] == "failed"
    [row] = await job_rows(rt.db)
    assert "no handler" in row["last_error"]


async def test_a_worker_that_lost_its_lock_cannot_finish_the_job(rt):
    await put(rt.db, "test.ok", {"tag": "lost"})
    job = await wk.claim(rt.db, "slow", visibility_ms=-1, kinds=["test.ok"])  # expires at once
    again = await wk.claim(rt.db, "fast", visibility_ms=60_000, kinds=["test.ok"])
    assert again["id"] == job["id"] and again["attempts"] == 2
    assert not await wk.complete(rt.db, job["id"], "slow")
    assert not await wk.heartbeat(rt.db, job["id"], "slow", 60_000)
    assert await wk.complete(rt.db, job["id"], "fast")


async def test_expired_jobs_without_attempts_left_are_reaped_as_failed(rt):
    await put(rt.db, "test.ok", {"tag": "reap"}, max_attempts=1)
    await wk.claim(rt.db, "dead", visibility_ms=-1, kinds=["test.ok"])
    assert await wk.claim(rt.db, "next", visibility_ms=60_000, kinds=["test.ok"]) is None
    await wk.reap(rt.db, keep_done_ms=60_000)
    [row] = await job_rows(rt.db)
    assert row["status"] == "failed" and "no attempts left" in row["last_error"]


VICTIM = textwrap.dedent("""
    import asyncio, sys
    from chatmem.db.engine import Database
    from chatmem.jobs.worker import claim

    async def main():
        db = Database(sys.argv[1])
        job = await claim(db, "victim", visibility_ms=int(sys.argv[2]), kinds=["test.ok"])
        print("claimed", job["id"], flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
""")


async def test_job_of_a_sigkilled_worker_runs_again_after_its_timeout(rt, db_url):
    jid = await put(rt.db, "test.ok", {"tag": "sigkill"})
    proc = subprocess.Popen(
        [sys.executable, "-c", VICTIM, db_url, "1500"],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        line = await asyncio.to_thread(proc.stdout.readline)
        assert line.split() == ["claimed", jid]
        w = wk.Worker(rt, kinds=["test.ok"])
        assert await w.run_once() is None  # held by the (still living) victim
        proc.send_signal(signal.SIGKILL)
        await asyncio.to_thread(proc.wait)
        [row] = await job_rows(rt.db)
        assert row["status"] == "running" and row["locked_by"] == "victim"
        job = None
        for _ in range(2000):  # becomes claimable once locked_until passes
            job = await w.run_once()
            if job is not None:
                break
            await asyncio.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (
        job is not None and job["id"] == jid and job["attempts"] == 2 and job["outcome"] == "done"
    )
    [row] = await job_rows(rt.db)
    assert row["status"] == "done" and row["locked_by"] == w.id
    assert CALLS["sigkill"] == ["ok"]


async def test_worker_service_runs_in_process_and_stops(db_url):
    from chatmem.app import create_app

    app = create_app(make_settings(db_url))
    rt = app.state.runtime
    rt.job_handlers.update(TEST_HANDLERS)
    assert any(isinstance(s, wk.Worker) for s in rt.services)
    async with app.router.lifespan_context(app):
        await put(rt.db, "test.ok", {"tag": "service"})
        for _ in range(400):
            if CALLS.get("service"):
                break
            await asyncio.sleep(0.02)
    assert CALLS["service"] == ["ok"]
    off = create_app(make_settings(db_url, run_worker=False))
    assert not any(isinstance(s, wk.Worker) for s in off.state.runtime.services)
    await off.state.runtime.db.dispose()


async def test_admin_can_list_failed_jobs(new_user, app):
    admin = await new_user(admin=True)
    user = await new_user()
    await put(app.state.runtime.db, "test.nobody-handles-this", {})
    job = await wk.claim(
        app.state.runtime.db, "w", visibility_ms=60_000, kinds=["test.nobody-handles-this"]
    )
    await wk.fail(app.state.runtime.db, job, "w", "boom", permanent=True, base_s=1, cap_s=1)
    r = await admin.client.get("/api/admin/jobs", params={"status": "failed"})
    assert r.status_code == 200 and r.json()["items"][0]["last_error"] == "boom"
    assert (await user.client.get("/api/admin/jobs")).status_code == 403
    assert (
        await admin.client.get("/api/admin/jobs", params={"status": "bogus"})
    ).status_code == 422

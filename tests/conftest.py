"""Test fixtures: every storage test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ``CHATMEM_TEST_POSTGRES_URL`` (a server URL; each pytest session creates and
drops its own database there, so parallel sessions never collide). Without it the PostgreSQL
variants are skipped locally — but under CI (``CI`` set) a missing or unreachable server fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from dataclasses import dataclass

import httpx
import pytest

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.config import Settings
from chatmem.db.migrate import upgrade
from chatmem.db.schema import metadata

PG_ENV = "CHATMEM_TEST_POSTGRES_URL"


def _pg_admin_url() -> str | None:
    url = os.environ.get(PG_ENV)
    if not url and os.environ.get("CI"):
        raise RuntimeError(f"{PG_ENV} must be set in CI: PostgreSQL tests may not be skipped")
    return url


def _with_db(url: str, dbname: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=dbname).render_as_string(hide_password=False)


async def _pg_exec(url: str, sql: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    conn = await asyncpg.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        database=u.database or "postgres",
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _run(coro) -> None:
    """asyncio.run, also from inside a running loop (Playwright's sync API keeps one running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    import threading

    err: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller
            err.append(e)

    th = threading.Thread(target=target)
    th.start()
    th.join()
    if err:
        raise err[0]


@pytest.fixture(scope="session")
def pg_url():
    admin = _pg_admin_url()
    if not admin:
        yield None
        return
    name = f"chatmem_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    _run(_pg_exec(_with_db(admin, "postgres"), f'CREATE DATABASE "{name}"'))
    url = _with_db(admin, name)
    upgrade(url)
    yield url
    _run(_pg_exec(_with_db(admin, "postgres"), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def pg_english_url(monkeypatch):
    """A throw-away PostgreSQL database migrated with ``CHATMEM_SEARCH_CONFIG=english`` (left
    set for the test; dropped after): the text-search configuration is fixed at migration."""
    admin = _pg_admin_url()
    if not admin:
        pytest.skip(f"{PG_ENV} not set (PostgreSQL tests run in CI)")
    name = f"chatmem_test_english_{uuid.uuid4().hex[:8]}"
    _run(_pg_exec(_with_db(admin, "postgres"), f'CREATE DATABASE "{name}"'))
    url = _with_db(admin, name)
    try:
        monkeypatch.setenv("CHATMEM_SEARCH_CONFIG", "english")
        upgrade(url)
        yield url
    finally:
        _run(
            _pg_exec(_with_db(admin, "postgres"), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        )


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory):
    path = tmp_path_factory.mktemp("tmpl") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path, sqlite_template):
    """A migrated, empty database URL on each dialect."""
    if request.param == "sqlite":
        target = tmp_path / "chatmem.db"
        shutil.copy(sqlite_template, target)
        return f"sqlite:///{target}"
    url = request.getfixturevalue("pg_url")
    if url is None:
        pytest.skip(f"{PG_ENV} not set (PostgreSQL tests run in CI)")
    tables = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
    _run(_pg_exec(url, f"TRUNCATE {tables} CASCADE"))
    return url


def make_settings(db_url: str, **kw) -> Settings:
    base = dict(
        database_url=db_url,
        demo_delay_ms=0,
        demo_min_tokens=40,
        sweep_interval_s=0.2,
        job_poll_interval_s=0.05,
    )
    base.update(kw)
    return Settings(**base)


@pytest.fixture
def settings(db_url):
    return make_settings(db_url)


@pytest.fixture
async def app(settings):
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@dataclass
class ApiUser:
    id: str
    email: str
    key: str
    client: httpx.AsyncClient


@pytest.fixture
async def new_user(app):
    """Factory: ``await new_user(email, admin=False)`` → ApiUser with an authenticated client."""
    made: list[httpx.AsyncClient] = []
    rt = app.state.runtime

    async def factory(
        email: str | None = None, *, admin: bool = False, password: str | None = None
    ):
        email = email or f"user-{uuid.uuid4().hex[:8]}@example.com"
        user, key = await auth_service.create_user(rt.db, email, password=password, admin=admin)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        )
        made.append(client)
        return ApiUser(id=user["id"], email=email, key=key, client=client)

    yield factory
    for c in made:
        await c.aclose()


@pytest.fixture
async def anon(app):
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as c:
        yield c

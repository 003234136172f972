"""The upgrade path: a database made at an earlier schema revision, with data, migrates forward
to this code's head and everything in it is still there and usable.

The fixtures in tests/data/upgrade/ (tools/make_upgrade_fixture.py) stay at the revision they were
made at (manifest.json says which): when a migration is added, this test runs it on real data.
Regenerate them after a release, never in the commit that adds the migration.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import asyncpg
import httpx
import pytest

from chatmem.app import create_app
from chatmem.db import migrate
from tests.conftest import _pg_admin_url, _with_db, make_settings

DATA = Path(__file__).parent / "data" / "upgrade"
MANIFEST = json.loads((DATA / "manifest.json").read_text())


@pytest.fixture(params=["sqlite", "postgresql"])
def old_db(request, tmp_path):
    """(URL of a copy of the fixture database, its manifest)."""
    manifest = MANIFEST[request.param]
    if request.param == "sqlite":
        target = tmp_path / "old.db"
        shutil.copy(DATA / "chatmem-sqlite.db", target)
        yield f"sqlite:///{target}", manifest
        return
    admin = _pg_admin_url()
    if not admin:
        pytest.skip("CHATMEM_TEST_POSTGRES_URL not set")
    name = f"chatmem_upgrade_{tmp_path.name[-20:].replace('-', '_').lower()}"

    async def admin_sql(statement: str) -> None:
        conn = await asyncpg.connect(_with_db(admin, "postgres"))
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    async def load(url: str) -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute((DATA / "chatmem-postgresql.sql").read_text("utf-8"))
        finally:
            await conn.close()

    asyncio.run(admin_sql(f'DROP DATABASE IF EXISTS "{name}"'))
    asyncio.run(admin_sql(f'CREATE DATABASE "{name}"'))
    url = _with_db(admin, name)
    try:
        asyncio.run(load(url))
        yield url, manifest
    finally:
        asyncio.run(admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def test_the_fixtures_are_of_a_revision_we_ship():
    for manifest in MANIFEST.values():
        assert migrate.known(manifest["revision"]), manifest["revision"]


def test_an_old_database_migrates_forward_with_its_data(old_db):
    url, manifest = old_db
    migrate.upgrade(url)  # from the fixture's revision to head: new migrations run on real data
    asyncio.run(_reads_back(url, manifest))


async def _current(application) -> str | None:
    async with application.state.runtime.db.read() as c:
        return await migrate.current(c)


async def _reads_back(url: str, manifest: dict) -> None:
    application = create_app(make_settings(url))
    async with application.router.lifespan_context(application):
        assert await _current(application) == migrate.head()
        transport = httpx.ASGITransport(app=application)
        headers = {"Authorization": f"Bearer {manifest['key']}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://t", headers=headers
        ) as c:
            me = (await c.get("/api/me")).json()
            assert me["id"] == manifest["user_id"] and me["email"] == manifest["email"]
            cid = manifest["conversation_id"]
            page = (await c.get(f"/api/conversations/{cid}/messages")).json()
            got = [{"id": m["id"], "role": m["role"], "text": m["text"]} for m in page["items"]]
            assert got == manifest["messages"]
            memories = (await c.get("/api/me/memories")).json()["items"]
            assert manifest["memory"] in [m["memory_text"] for m in memories]
            hits = (await c.get("/api/search", params={"q": "lighthouses"})).json()
            assert cid in [h["conversation_id"] for h in hits["messages"]]
            # and the migrated database takes new writes: one more turn
            r = await c.post(f"/api/conversations/{cid}/messages", json={"content": "thanks"})
            assert r.status_code == 202, r.text
        # the password still logs in
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as anon:
            login = {"email": manifest["email"], "password": manifest["password"]}
            r = await anon.post("/api/auth/login", json=login)
            assert r.status_code == 200, r.text


def test_the_newest_migration_runs_on_the_data_too(old_db):
    """Until the next migration lands the fixture is at head, so migrating it is a no-op: step the
    newest migration down and up again on the same data (its downgrade must keep data too)."""
    url, manifest = old_db
    migrate.upgrade(url)
    previous = migrate.previous(migrate.head())
    assert previous is not None
    migrate.downgrade(url, previous)
    migrate.upgrade(url)
    asyncio.run(_reads_back(url, manifest))

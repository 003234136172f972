"""The text search configuration guard (search/config_check.py): on PostgreSQL a
``CHATMEM_SEARCH_CONFIG`` other than the one the index was built with stops the app, the runtime
and ``chatmem migrate``/``serve`` with a message naming both values; SQLite has no configuration
and is unaffected."""

from __future__ import annotations

import asyncio
import subprocess
import uuid

import pytest

from chatmem.app import create_app, create_runtime
from chatmem.db.engine import Database
from chatmem.search import config_check, config_store

from .conftest import make_settings
from .embed_support import running_app, say
from .servers import CHATMEM, chatmem_env

_EXPR = (
    "CASE WHEN ((search_text = ''::text)) THEN NULL::tsvector ELSE "
    "((to_tsvector('{cfg}'::regconfig, search_text) || "
    "to_tsvector('simple'::regconfig, chatmem_cjk_terms(search_text))) || x) END"
)


def test_the_text_part_of_the_expression_is_read():
    assert config_store.text_config(_EXPR.format(cfg="english")) == "english"
    assert config_store.text_config(_EXPR.format(cfg="simple")) == "simple"
    assert config_store.text_config("to_tsvector('simple'::regconfig, other)") is None
    assert config_check.mismatch(None, "english") is None  # SQLite / no index: nothing to compare
    assert config_check.mismatch("simple", "simple") is None
    msg = config_check.mismatch("english", "simple")
    assert msg and "'simple'" in msg and "'english'" in msg
    assert "CHATMEM_SEARCH_CONFIG=english" in msg  # the fix


async def _app_searches(settings) -> None:
    """The app starts and search finds a message written through it."""
    async with running_app(settings, f"{uuid.uuid4().hex[:8]}@example.com") as (_rt, u):
        r = await u.client.post("/api/conversations", json={})
        mid = await say(u, r.json()["id"], "the rivers were running")
        r = await u.client.get("/api/search", params={"q": "running"})
        assert r.status_code == 200, r.text
        assert [m["id"] for m in r.json()["messages"]] == [mid]


async def _app_start(settings) -> None:
    """Run the app's lifespan (raises what its start raises); the database is closed either way."""
    app = create_app(settings)
    try:
        async with app.router.lifespan_context(app):
            pass
    finally:
        await app.state.runtime.db.dispose()


async def _runtime_start(settings) -> None:
    rt = create_runtime(settings)
    try:
        await rt.start()
        await rt.stop()
    finally:
        await rt.db.dispose()


def test_the_setting_is_checked_against_the_index(db_url):
    """The suite's databases are migrated with the default: PostgreSQL reports ``simple`` and
    refuses ``english``; SQLite has no configuration, accepts any value and searches as always."""
    db = Database(db_url)

    async def indexed():
        try:
            async with db.read() as c:
                return await config_store.indexed_config(c)
        finally:
            await db.dispose()

    found = asyncio.run(indexed())
    english = make_settings(db_url, run_worker=False, search_config="english")
    if db_url.startswith("sqlite"):
        assert found is None
        asyncio.run(_app_searches(english))  # unaffected: starts, and search finds
        return
    assert found == "simple"
    asyncio.run(_app_searches(make_settings(db_url, run_worker=False)))
    with pytest.raises(config_check.SearchConfigMismatch, match="built with 'simple'"):
        asyncio.run(_app_start(english))


def test_sqlite_cli_ignores_the_setting(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    r = _cli(["migrate"], url, "english")
    assert r.returncode == 0, r.stderr
    assert _cli(["migrate"], url, "simple").returncode == 0


def _cli(args: list[str], url: str, cfg: str) -> subprocess.CompletedProcess:
    env = chatmem_env(url, CHATMEM_SEARCH_CONFIG=cfg)
    return subprocess.run([CHATMEM, *args], env=env, capture_output=True, text=True, timeout=120)


def test_postgres_refuses_a_configuration_other_than_the_index(monkeypatch, pg_english_url):
    """A database migrated with ``english``: ``simple`` in the settings stops the app's lifespan,
    the runtime (``chatmem worker``'s path) and ``chatmem migrate``/``serve`` (exit 2, both values
    and the fix on stderr, no traceback); ``english`` runs."""
    url = pg_english_url
    monkeypatch.delenv("CHATMEM_SEARCH_CONFIG")
    wrong = make_settings(url, run_worker=False)  # the default, simple
    assert wrong.search_config == "simple"
    with pytest.raises(config_check.SearchConfigMismatch) as e:
        asyncio.run(_app_start(wrong))
    assert "'simple'" in str(e.value) and "'english'" in str(e.value)
    with pytest.raises(config_check.SearchConfigMismatch):
        asyncio.run(_runtime_start(wrong))
    english = make_settings(url, run_worker=False, search_config="english")
    asyncio.run(_app_searches(english))
    asyncio.run(_runtime_start(english))
    for args in (["migrate"], ["serve", "--port", "1"]):
        r = _cli(args, url, "simple")
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "CHATMEM_SEARCH_CONFIG is 'simple'" in r.stderr
        assert "built with 'english'" in r.stderr and "Traceback" not in r.stderr
    r = _cli(["migrate"], url, "english")
    assert r.returncode == 0, r.stderr

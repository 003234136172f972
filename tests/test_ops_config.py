"""``chatmem config`` and the start-up checks: secrets masked, a wrong setting is one clear line
and exit 2 (never a traceback), and commands that need a database do not create an empty one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid

import asyncpg
import pytest

from chatmem.config import Settings
from chatmem.ops import config as opsconfig
from tests.conftest import _pg_admin_url, _with_db
from tests.servers import CHATMEM, chatmem_env, free_port


def cli(args: list[str], db_url: str, **extra: str) -> subprocess.CompletedProcess:
    env = chatmem_env(db_url, **extra)
    return subprocess.run([CHATMEM, *args], env=env, capture_output=True, text=True, timeout=120)


def test_secrets_are_masked_everywhere():
    s = Settings(
        database_url="postgresql://chat:hunter2@db:5432/chatmem",
        openai_api_key="sk-live-123",
        metrics_token="tok-9",
        models=[{"id": "m", "provider": "openai", "options": {"api_key": "sk-nested"}}],
    )
    values = opsconfig.effective(s)
    dumped = json.dumps(values)
    for secret in ("hunter2", "sk-live-123", "tok-9", "sk-nested"):
        assert secret not in dumped
    assert values["database_url"] == "postgresql://chat:***@db:5432/chatmem"
    assert values["openai_api_key"] == opsconfig.MASK and values["anthropic_api_key"] == ""
    assert values["port"] == 8000  # the rest as it is


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"database_url": "mysql://x/y"}, "CHATMEM_DATABASE_URL: unsupported database URL"),
        ({"models": [{"id": "m", "provider": "nope"}]}, "names provider 'nope'"),
        ({"models": [{"provider": "openai"}]}, "needs 'id' and 'provider'"),
        ({"models_file": "/no/such/models.json"}, "CHATMEM_MODELS_FILE: no file"),
        ({"default_model": "ghost"}, "default model 'ghost' is not in the catalogue"),
        ({"log_level": "loud"}, "CHATMEM_LOG_LEVEL: 'loud' is not one of"),
        ({"admin_listen": "9464"}, "CHATMEM_ADMIN_LISTEN: expected host:port"),
    ],
)
def test_problems_are_named(kw, expected):
    found = opsconfig.problems(Settings(**kw))
    assert any(expected in p for p in found), found


def test_a_bad_models_file_is_named(tmp_path):
    bad = tmp_path / "models.toml"
    bad.write_text("[[models]\nid = ")
    found = opsconfig.problems(Settings(models_file=str(bad)))
    assert len(found) == 1 and found[0].startswith(f"CHATMEM_MODELS_FILE ({bad})")
    assert opsconfig.problems(Settings()) == []


def test_the_cli_fails_fast_with_a_clear_message(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    bad = tmp_path / "models.json"
    bad.write_text("{")
    for extra, expected in [
        ({"CHATMEM_MODELS_FILE": str(bad)}, "CHATMEM_MODELS_FILE"),
        ({"CHATMEM_PORT": "abc"}, "CHATMEM_PORT: Input should be a valid integer"),
        ({"CHATMEM_MODELS": '[{"id": "m", "provider": "nope"}]'}, "names provider 'nope'"),
    ]:
        r = cli(["serve"], url, **extra)
        assert r.returncode == 2, (extra, r.stdout, r.stderr)
        assert expected in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert not (tmp_path / "x.db").exists()  # nothing was created on the way out
    r = cli(["migrate"], f"postgresql://nobody:pw@127.0.0.1:{free_port()}/none")
    assert r.returncode == 1 and "cannot use the database" in r.stderr
    assert "nobody:***@" in r.stderr and "Traceback" not in r.stderr
    r = cli(["config"], url, CHATMEM_OPENAI_API_KEY="sk-cli-secret")
    assert r.returncode == 0 and "CHATMEM_OPENAI_API_KEY=********" in r.stdout
    assert "sk-cli-secret" not in r.stdout


def test_commands_say_there_is_no_database_instead_of_creating_one(tmp_path):
    path = tmp_path / "data" / "chatmem.db"
    url = f"sqlite:///{path}"
    for args in (["users", "list"], ["users", "create", "--email", "a@example.com"]):
        r = cli(args, url)
        assert r.returncode == 1 and "no database at" in r.stderr and "chatmem migrate" in r.stderr
        assert "Traceback" not in r.stderr
    assert not path.exists() and not path.parent.exists()
    assert cli(["migrate"], url).returncode == 0  # migrate (and serve) do create it
    assert cli(["users", "list"], url).returncode == 0


def test_an_empty_postgres_database_is_not_given_a_schema_by_users_list():
    admin = _pg_admin_url()
    if not admin:
        pytest.skip("CHATMEM_TEST_POSTGRES_URL not set")
    name = f"chatmem_empty_{uuid.uuid4().hex[:8]}"

    async def sql(url: str, statement: str):
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetch(statement)
        finally:
            await conn.close()

    asyncio.run(sql(_with_db(admin, "postgres"), f'CREATE DATABASE "{name}"'))
    url = _with_db(admin, name)
    try:
        r = cli(["users", "list"], url)
        assert r.returncode == 1 and "holds no chatmem schema" in r.stderr, r.stderr
        tables = asyncio.run(sql(url, "SELECT 1 FROM pg_tables WHERE schemaname = 'public'"))
        assert tables == []
    finally:
        asyncio.run(sql(_with_db(admin, "postgres"), f'DROP DATABASE "{name}" WITH (FORCE)'))

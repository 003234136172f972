"""``chatmem backup`` / ``restore`` as an operator runs them: real CLI processes, a real server.

SQLite: backups taken while a ``chatmem serve`` process keeps writing are complete, consistent
databases (integrity and foreign keys checked, every user message of a turn has its assistant
message: a torn copy would show half a turn). PostgreSQL: pg_dump's archive, checked and restored
into another database. Both: a damaged or newer-release backup is refused, and restore will not
replace data unless told to.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import threading
import uuid
from pathlib import Path

import asyncpg
import httpx
import pytest

from chatmem.db import migrate
from chatmem.ops import store
from tests.conftest import _pg_admin_url, _with_db
from tests.servers import CHATMEM, Server, chatmem_env, create_user


def cli(args: list[str], db_url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHATMEM, *args], env=chatmem_env(db_url), capture_output=True, text=True, timeout=120
    )


def turns_balanced(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        rows = dict(conn.execute("SELECT role, count(*) FROM messages GROUP BY role").fetchall())
    finally:
        conn.close()
    return rows.get("user", 0), rows.get("assistant", 0)


@pytest.fixture
def sqlite_url(tmp_path, sqlite_template):
    target = tmp_path / "live.db"
    shutil.copy(sqlite_template, target)
    return f"sqlite:///{target}"


def test_sqlite_backups_while_a_server_writes_are_consistent(sqlite_url, tmp_path):
    key = create_user(sqlite_url, "writer@example.com")
    server = Server(sqlite_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "0"}).start()
    stop = threading.Event()
    written = [0]

    def write() -> None:
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"}) as c:
            while not stop.is_set():
                cid = c.post("/api/conversations", json={}).json()["id"]
                r = c.post(f"/api/conversations/{cid}/messages", json={"content": "hello " * 50})
                while r.status_code == 429 and not stop.is_set():  # the user's 3 answers at once:
                    stop.wait(0.02)  # this loop outruns the answers it starts; let one finish
                    body = {"content": "hello " * 50}
                    r = c.post(f"/api/conversations/{cid}/messages", json=body)
                assert r.status_code == 202 or stop.is_set(), r.text
                written[0] += r.status_code == 202

    writer = threading.Thread(target=write)
    try:
        writer.start()
        backups = []
        for i in range(3):
            while written[0] < 3 * (i + 1):  # writes land before and during every copy
                stop.wait(0.05)
            out = tmp_path / f"b{i}.db"
            r = cli(["backup", str(out)], sqlite_url)
            assert r.returncode == 0, r.stdout + r.stderr
            assert "check: ok" in r.stdout
            backups.append(out)
    finally:
        stop.set()
        writer.join(timeout=30)
        server.kill()
    assert written[0] >= 9
    counts = []
    for b in backups:
        problems, revision, n = store.inspect(b)
        assert problems == [] and revision == migrate.head()
        users, assistants = turns_balanced(b)
        assert users == assistants > 0  # whole turns only
        assert not Path(f"{b}-wal").exists()  # one self-contained file
        counts.append(n["messages"])
    assert counts == sorted(counts) and counts[-1] > counts[0]
    # and one restores into a new database the CLI then uses
    fresh = f"sqlite:///{tmp_path / 'restored' / 'chatmem.db'}"
    r = cli(["restore", str(backups[-1])], fresh)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "writer@example.com" in cli(["users", "list"], fresh).stdout


def test_restore_never_replaces_data_unasked_and_refuses_bad_backups(sqlite_url, tmp_path):
    create_user(sqlite_url, "kept@example.com")
    good = tmp_path / "good.db"
    assert cli(["backup", str(good)], sqlite_url).returncode == 0
    again = cli(["backup", str(good)], sqlite_url)
    assert again.returncode == 1 and "--force" in again.stderr
    assert cli(["backup", str(good), "--force"], sqlite_url).returncode == 0

    r = cli(["restore", str(good)], sqlite_url)
    assert r.returncode == 1 and "--yes" in r.stderr
    assert cli(["restore", str(good), "--yes"], sqlite_url).returncode == 0

    torn = tmp_path / "torn.db"
    torn.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    r = cli(["backup", str(torn), "--check"], sqlite_url)
    assert r.returncode == 1 and "FAILED" in r.stdout, r.stdout + r.stderr
    assert "Traceback" not in r.stderr

    newer = tmp_path / "newer.db"
    shutil.copy(good, newer)
    conn = sqlite3.connect(newer)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.commit()
    conn.close()
    r = cli(["restore", str(newer), "--yes"], f"sqlite:///{tmp_path / 'other.db'}")
    assert r.returncode == 1 and "newer chatmem" in r.stderr

    not_a_backup = tmp_path / "notes.txt"
    not_a_backup.write_text("hello")
    r = cli(["backup", str(not_a_backup), "--check"], sqlite_url)
    assert r.returncode == 1 and "not a SQLite file nor a pg_dump archive" in r.stderr


@pytest.fixture
def pg_pair():
    """(a migrated database with a user, an empty database) on the test PostgreSQL."""
    admin = _pg_admin_url()
    if not admin or shutil.which("pg_dump") is None:
        pytest.skip("needs CHATMEM_TEST_POSTGRES_URL and pg_dump")
    names = [f"chatmem_bk_{uuid.uuid4().hex[:8]}" for _ in range(2)]

    async def sql(statement: str) -> None:
        conn = await asyncpg.connect(_with_db(admin, "postgres"))
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    for n in names:
        asyncio.run(sql(f'CREATE DATABASE "{n}"'))
    try:
        yield tuple(_with_db(admin, n) for n in names)
    finally:
        for n in names:
            asyncio.run(sql(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)'))


def test_postgres_backup_check_and_restore(pg_pair, tmp_path):
    source, target = pg_pair
    assert cli(["migrate"], source).returncode == 0
    create_user(source, "pg@example.com")
    dump = tmp_path / "chatmem.dump"
    r = cli(["backup", str(dump)], source)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(postgresql," in r.stdout and "schema revision: 0011" not in r.stderr
    assert "check: ok" in r.stdout
    assert cli(["backup", str(dump), "--check"], source).returncode == 0
    r = cli(["restore", str(dump)], target)
    assert r.returncode == 1 and "--yes" in r.stderr
    r = cli(["restore", str(dump), "--yes"], target)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pg@example.com" in cli(["users", "list"], target).stdout
    # a SQLite backup is not restored into PostgreSQL
    lite = tmp_path / "l.db"
    shutil.copy(Path(__file__).parent / "data" / "upgrade" / "chatmem-sqlite.db", lite)
    r = cli(["restore", str(lite), "--yes"], target)
    assert r.returncode == 1 and "sqlite backup" in r.stderr

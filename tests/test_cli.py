"""The CLI as users run it: real subprocesses against a real database file."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CHATMEM = str(Path(sys.executable).with_name("chatmem"))


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([CHATMEM, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def env(db_url):
    e = dict(os.environ)
    e["CHATMEM_DATABASE_URL"] = db_url
    return e


def test_users_and_keys(env, tmp_path):
    r = run(
        ["users", "create", "--email", "Ann@Example.com", "--name", "Ann", "--password", "pw"], env
    )
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip().splitlines()[-1]
    assert key.startswith("cm_")
    r = run(["users", "create", "--email", "ann@example.com"], env)
    assert r.returncode == 1 and "already exists" in r.stdout
    r = run(["users", "list"], env)
    assert "ann@example.com" in r.stdout
    r = run(["keys", "create", "--email", "ann@example.com", "--name", "ci"], env)
    key2 = r.stdout.strip().splitlines()[-1]
    assert key2.startswith("cm_") and key2 != key
    r = run(["keys", "revoke", key2[:10]], env)
    assert r.returncode == 0, r.stdout
    r = run(["keys", "revoke", key2[:10]], env)
    assert r.returncode == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_first_serve_creates_admin_and_prints_key_and_login_link(env):
    port = _free_port()
    proc = subprocess.Popen(
        [CHATMEM, "serve", "--port", str(port), "--no-worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "Application startup complete" in line:
                break
        out = "".join(lines)
        assert "admin@localhost" in out, out
        # the banner says how to get back in once the one-time link is used
        assert "chatmem users set-password --email admin@localhost" in out, out
        assert "chatmem users login-link --email admin@localhost" in out, out
        link = next(w for w in out.split() if "/api/auth/magic?token=" in w)
        key = next(w for w in out.split() if w.startswith("cm_"))
        base = f"http://127.0.0.1:{port}"
        me = httpx.get(f"{base}/api/me", headers={"Authorization": f"Bearer {key}"}).json()
        assert me["role"] == "admin"
        r = httpx.get(link, follow_redirects=False)
        assert r.status_code == 303 and "chatmem_session" in r.cookies
        me = httpx.get(f"{base}/api/me", cookies={"chatmem_session": r.cookies["chatmem_session"]})
        assert me.status_code == 200 and me.json()["email"] == "admin@localhost"
        assert httpx.get(link, follow_redirects=False).status_code == 401  # one-time
        assert httpx.get(f"{base}/").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # a second start on the same database creates nobody
    port = _free_port()
    proc = subprocess.Popen(
        [CHATMEM, "serve", "--port", str(port), "--no-worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            out.append(line)
            if "Application startup complete" in line:
                break
        assert "First start" not in "".join(out)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_migrate_creates_the_sqlite_folder(tmp_path):
    """A fresh checkout has no ./data/: the first `chatmem migrate`/`serve` must create it."""
    target = tmp_path / "not" / "yet" / "there.db"
    env = dict(os.environ, CHATMEM_DATABASE_URL=f"sqlite:///{target}")
    r = run(["migrate"], env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.exists()
    assert r.stderr == ""  # no warning on a fresh database (migration 0013 reflected tables)


def test_the_command_list_reads_as_sentences():
    """``chatmem --help`` joins each summary's wrapped docstring lines (rich mode kept them)."""
    r = run(["--help"], dict(os.environ, COLUMNS="200"))
    assert r.returncode == 0, r.stderr
    assert "Open WebUI, LibreChat or chatmem; safe to run again" in r.stdout

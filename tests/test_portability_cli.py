"""``chatmem import`` / ``export`` / ``users delete`` as users run them: real subprocesses on
SQLite and PostgreSQL — a progress bar and a report, idempotent re-runs, the archive written,
the account gone afterwards."""

from __future__ import annotations

import json
import zipfile

from tests.port_support import DATA
from tests.test_cli import env, run  # noqa: F401  (env is a fixture)


def test_import_export_delete(env, tmp_path):  # noqa: F811
    env["CHATMEM_TRANSFER_DIR"] = str(tmp_path / "tr")
    assert run(["users", "create", "--email", "cli@example.com"], env).returncode == 0
    r = run(["import", str(DATA / "chatgpt.json"), "--email", "cli@example.com", "--dry-run"], env)
    assert r.returncode == 0, r.stderr
    assert "would import" in r.stdout and "conversations" in r.stdout
    r = run(["import", str(DATA / "chatgpt.json"), "--email", "cli@example.com"], env)
    assert r.returncode == 0, r.stderr
    assert "messages imported" in r.stdout and "14" in r.stdout
    assert "4 conversations ━" in r.stdout  # the Rich progress bar's last frame
    assert "a ChatGPT conversation needs a 'mapping' object" in r.stdout
    r = run(["import", str(DATA / "chatgpt.json"), "--email", "cli@example.com"], env)
    assert "conversations unchanged" in r.stdout
    claude = str(DATA / "claude.json")
    r = run(["import", claude, "--email", "cli@example.com", "--format", "claude"], env)
    assert r.returncode == 0 and "claude import" in r.stdout, r.stdout
    r = run(["import", claude, "--email", "cli@example.com", "--format", "librechat"], env)
    assert r.returncode == 1 and "LibreChat conversation must be an object" in r.stdout
    r = run(["import", claude, "--email", "cli@example.com", "--format", "word"], env)
    assert r.returncode == 1 and "format must be one of" in r.stdout
    r = run(["import", str(DATA / "claude.json"), "--email", "nobody@example.com"], env)
    assert r.returncode == 1 and "error" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"what": 1}')
    r = run(["import", str(bad), "--email", "cli@example.com"], env)
    assert r.returncode == 1 and "could not be recognised" in r.stdout
    assert "--format" in r.stdout  # how to name it, in the CLI's words

    out = tmp_path / "all.zip"
    r = run(["export", "--email", "cli@example.com", "--out", str(out)], env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(zipfile.ZipFile(out).read("conversations.json"))
    assert doc["format"] == "chatmem" and len(doc["conversations"]) == 4
    cid = doc["conversations"][0]["id"]
    md = tmp_path / "one.md"
    r = run(
        [
            "export",
            "--email",
            "cli@example.com",
            "--conversation",
            cid,
            "--format",
            "markdown",
            "--out",
            str(md),
        ],
        env,
    )
    assert r.returncode == 0 and md.read_text().startswith("# ")

    r = run(["users", "delete", "--email", "cli@example.com", "--yes"], env)
    assert r.returncode == 0 and "deleted" in r.stdout
    r = run(["users", "list"], env)
    assert "cli@example.com" not in r.stdout

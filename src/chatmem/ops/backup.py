"""``chatmem backup`` / ``chatmem restore``: a copy of the database that can be trusted, and back.

Why it exists: a self-hoster's data is one file (SQLite) or one PostgreSQL database; copying the
SQLite file while a server writes can tear it (the WAL is a second file), and a dump nobody ever
checked is a hope, not a backup. So:

- **SQLite**: the online backup API (``store.online_copy``): a consistent snapshot while the
  server keeps serving; written beside the target and renamed into place, then checked.
- **PostgreSQL**: ``pg_dump --format=custom`` (the tool PostgreSQL itself trusts; it reads one
  snapshot too), then checked with ``pg_restore --list``. ``pg_dump`` must be on ``PATH`` and of the
  server's major version or newer.
- **check** (``chatmem backup PATH --check``): a backup's integrity (SQLite: ``integrity_check``
  and ``foreign_key_check``; a dump: its table of contents lists chatmem's tables and data), its
  schema revision (one of ours: a newer release's backup is refused on restore) and row counts.
- **restore**: checks first, refuses to replace a database holding users unless told to
  (``--yes``), then migrates the restored data forward to this release's schema.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import URL, make_url

from ..db import migrate
from ..db.engine import normalize_url
from . import store

#: tables whose data a chatmem dump must contain
DUMP_TABLES = ("alembic_version", "users", "conversations", "messages")


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


@dataclass
class Report:
    path: Path
    dialect: str
    revision: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    size: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None: PostgreSQL); an in-memory database has no file."""
    u = make_url(normalize_url(url))
    if u.get_backend_name() != "sqlite":
        return None
    if not u.database or u.database == ":memory:" or u.database.startswith("file:"):
        raise BackupError("an in-memory SQLite database cannot be backed up or restored")
    return Path(u.database)


def backup(url: str, dest: Path, *, force: bool = False) -> Report:
    """Write a backup of the database at ``url`` to ``dest`` and check it."""
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists: pass --force to replace it")
    if dest.parent and not dest.parent.is_dir():
        raise BackupError(f"no folder {dest.parent}")
    tmp = dest.with_name(f".{dest.name}.partial")
    tmp.unlink(missing_ok=True)
    path = sqlite_file(url)
    try:
        if path is not None:
            if not path.is_file():
                raise BackupError(f"no database at {path} (CHATMEM_DATABASE_URL)")
            store.online_copy(path, tmp)
        else:
            _pg_tool("pg_dump", url, "--format=custom", "--no-owner", f"--file={tmp}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return check(dest)


def check(path: Path) -> Report:
    """Check a backup file (a SQLite database or a ``pg_dump`` custom-format archive)."""
    if not path.is_file():
        raise BackupError(f"no backup at {path}")
    if store.is_sqlite_file(path):
        rep = Report(path, "sqlite", size=path.stat().st_size)
        rep.problems, rep.revision, rep.counts = store.inspect(path)
    else:
        rep = _check_dump(path)
    if rep.revision is None:
        rep.problems.append("no chatmem schema revision (alembic_version) in the backup")
    elif not migrate.known(rep.revision):
        rep.problems.append(
            f"schema revision {rep.revision} is not one of this release's migrations "
            "(made by a newer chatmem?)"
        )
    return rep


def restore(src: Path, url: str, *, replace: bool = False) -> Report:
    """Restore the backup ``src`` into the database at ``url``, then migrate it to head.

    Stop the servers and workers first: a restore replaces the data under them."""
    rep = check(src)
    if not rep.ok:
        raise BackupError(f"{src} is not a usable backup: " + "; ".join(rep.problems))
    path = sqlite_file(url)
    if (path is None) != (rep.dialect == "postgresql"):
        raise BackupError(f"{src} is a {rep.dialect} backup; CHATMEM_DATABASE_URL is not")
    if path is not None:
        if path.is_file() and store.has_users(path) and not replace:
            raise BackupError(f"{path} holds data: pass --yes to replace it with the backup")
        path.parent.mkdir(parents=True, exist_ok=True)
        for leftover in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)
        store.online_copy(src, path)
    else:
        if not replace:
            raise BackupError(
                "restoring a dump replaces every chatmem table of the database: pass --yes"
            )
        _pg_tool(
            "pg_restore", url, "--clean", "--if-exists", "--no-owner", "--single-transaction",
            "--exit-on-error", str(src),
        )  # fmt: skip
    migrate.upgrade(url)
    return rep


def _check_dump(path: Path) -> Report:
    rep = Report(path, "postgresql", size=path.stat().st_size)
    toc = _run(["pg_restore", "--list", str(path)], "pg_restore")
    if toc.returncode != 0:
        rep.problems.append(f"not a SQLite file nor a pg_dump archive ({toc.stderr.strip()})")
        return rep
    data = {
        line.split()[-2]
        for line in toc.stdout.splitlines()
        if " TABLE DATA " in line and len(line.split()) >= 2
    }
    missing = [t for t in DUMP_TABLES if t not in data]
    if missing:
        rep.problems.append("the dump holds no data of " + ", ".join(missing))
        return rep
    out = _run(
        ["pg_restore", "--data-only", "--table=alembic_version", "--file=-", str(path)],
        "pg_restore",
    )
    rows = out.stdout.split("FROM stdin;\n", 1)[-1].split("\n\\.", 1)[0].split()
    rep.revision = rows[0] if rows else None
    return rep


def libpq(url: str) -> tuple[str, dict[str, str]]:
    """A libpq URL for the PostgreSQL tools, with the password moved into the environment (so
    it is not on the process list)."""
    u: URL = make_url(normalize_url(url))
    env = dict(os.environ)
    if u.password:
        env["PGPASSWORD"] = str(u.password)
    plain = u.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _pg_tool(tool: str, url: str, *args: str) -> None:
    target, env = libpq(url)
    r = _run([tool, f"--dbname={target}", *args], tool, env)
    if r.returncode != 0:
        raise BackupError(f"{tool} failed: {r.stderr.strip()}")


def _run(argv: list[str], tool: str, env: dict | None = None) -> subprocess.CompletedProcess:
    if shutil.which(tool) is None:
        raise BackupError(
            f"{tool} is not installed: install the PostgreSQL client tools "
            "(Debian: apt install postgresql-client) of the server's major version"
        )
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)

"""The operator's commands (``backup``, ``restore``, ``config``) and the start-up guards every
command goes through.

Guards, so a mistake is one clear line and an exit code, never a traceback:

- ``load_settings``: a malformed ``CHATMEM_*`` value (``CHATMEM_PORT=abc``) → exit 2;
- ``checked``: ``ops.config.problems`` (database URL form, models file, unknown providers, …)
  → one line each, exit 2;
- ``migrate_or_exit``: what ``serve``, ``worker`` and ``migrate`` run — they create the SQLite
  file or the schema when there is none (``make serve`` on a fresh machine just works); a
  database that cannot be reached → exit 1 with the reason;
- ``prepare_or_exit``: ``migrate_or_exit``, then the full-text index must have been built with
  ``CHATMEM_SEARCH_CONFIG`` (PostgreSQL; ``search/config_check.py``) — else exit 2 naming both;
- ``ensure_database``: every other command (users, keys, import, export …) needs a database that
  exists: where there is none it says so and exits 1 instead of creating an empty one. One at an
  older schema is migrated forward first, as before.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from ..config import Settings, get_settings
from ..db import migrate
from ..db.engine import Database
from ..ops import backup as backups
from ..ops import config as opsconfig
from ..search import config_check

console = Console()
err = Console(stderr=True)

EXIT_CONFIG = 2  # the settings are wrong (fix the environment)
EXIT_FAILED = 1  # the settings are fine, the operation failed (database down, no database …)


def fail(message: str, code: int = EXIT_FAILED) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def load_settings(**overrides) -> Settings:
    try:
        return get_settings(**overrides)
    except ValidationError as e:
        for x in e.errors():
            name = "CHATMEM_" + "_".join(str(p) for p in x["loc"]).upper()
            err.print(f"[red]error:[/red] {name}: {x['msg']}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG) from None


def checked(settings: Settings) -> Settings:
    found = opsconfig.problems(settings)
    for p in found:
        err.print(f"[red]error:[/red] {p}", highlight=False, soft_wrap=True)
    if found:
        raise typer.Exit(EXIT_CONFIG)
    return settings


def _unreachable(url: str, e: BaseException) -> typer.Exit:
    first = (str(e).strip().splitlines() or [""])[0]
    reason = f"{type(e).__name__}: {first}" if first else type(e).__name__
    return fail(f"cannot use the database {opsconfig.masked_url(url)}: {reason}")


def migrate_or_exit(url: str) -> None:
    """Create or upgrade the schema (``serve``, ``worker``, ``migrate``)."""
    try:
        migrate.upgrade(url)
    except Exception as e:
        raise _unreachable(url, e) from None


async def _search_config_problem(s: Settings) -> str | None:
    db = Database(s.database_url)
    try:
        return await config_check.problem(db, s.search_config)
    finally:
        await db.dispose()


def prepare_or_exit(s: Settings) -> None:
    """Create or upgrade the schema, then refuse (exit 2) a ``CHATMEM_SEARCH_CONFIG`` other than
    the one the index was built with (``serve``, ``worker``, ``migrate``)."""
    migrate_or_exit(s.database_url)
    try:
        found = asyncio.run(_search_config_problem(s))
    except Exception as e:
        raise _unreachable(s.database_url, e) from None
    if found:
        raise fail(found, EXIT_CONFIG)


async def ensure_database(url: str) -> None:
    """An existing chatmem database at ``url``, migrated to head — or exit saying what is missing."""
    path = backups.sqlite_file(url)
    hint = "`chatmem migrate` creates it (`chatmem serve` does too)"
    if path is not None and not path.is_file():
        raise fail(f"no database at {path} (CHATMEM_DATABASE_URL): {hint}")
    db = Database(url)
    try:
        async with db.read() as c:
            revision = await migrate.current(c)
    except Exception as e:
        raise _unreachable(url, e) from None
    finally:
        await db.dispose()
    if revision is None:
        raise fail(f"{opsconfig.masked_url(url)} holds no chatmem schema: {hint}")
    if revision != migrate.head():
        if not migrate.known(revision):
            raise fail(f"the database is at schema {revision}, newer than this chatmem release")
        migrate_or_exit(url)


def register(app: typer.Typer) -> None:
    app.command("backup")(backup)
    app.command("restore")(restore)
    app.command("config")(config)


def _show(rep: backups.Report) -> None:
    print(f"backup: {rep.path} ({rep.dialect}, {rep.size:,} bytes)")
    print(f"schema revision: {rep.revision or '-'}")
    for name, n in rep.counts.items():
        print(f"{name}: {n:,}")
    for p in rep.problems:
        err.print(f"[red]problem:[/red] {p}", highlight=False, soft_wrap=True)
    print("check: " + ("ok" if rep.ok else "FAILED"))


def backup(
    path: Annotated[Path, typer.Argument(help="The backup file to write (or to check).")],
    check: bool = typer.Option(False, "--check", help="Only check an existing backup file."),
    force: bool = typer.Option(False, "--force", help="Replace PATH if it exists."),
) -> None:
    """Back up the database to PATH while it serves (SQLite: online backup API; PostgreSQL:
    pg_dump, custom format), then check the copy. --check checks an existing backup."""
    try:
        if check:
            rep = backups.check(path)
        else:
            url = checked(load_settings()).database_url
            rep = backups.backup(url, path, force=force)
    except backups.BackupError as e:
        raise fail(str(e)) from None
    _show(rep)
    if not rep.ok:
        raise typer.Exit(EXIT_FAILED)


def restore(
    path: Annotated[Path, typer.Argument(help="A backup made by `chatmem backup`.")],
    yes: bool = typer.Option(False, "--yes", help="Replace the data of the target database."),
) -> None:
    """Restore a backup into CHATMEM_DATABASE_URL (stop servers and workers first), then
    migrate it to this release's schema."""
    url = checked(load_settings()).database_url
    try:
        rep = backups.restore(path, url, replace=yes)
    except backups.BackupError as e:
        raise fail(str(e)) from None
    _show(rep)
    console.print(f"restored {path} into {opsconfig.masked_url(url)} (schema {migrate.head()})")


def config(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Print the effective settings as NAME=value lines (secrets masked) and check them; exit 2
    if one is wrong."""
    s = load_settings()
    values = opsconfig.effective(s)
    if as_json:
        print(json.dumps(values, indent=2, default=str))
    else:  # the environment-file form: NAME=value, one a line (lists and objects as JSON)
        for name, v in values.items():
            shown = json.dumps(v, default=str) if isinstance(v, list | dict) else str(v)
            print(f"CHATMEM_{name.upper()}={shown}")
    checked(s)

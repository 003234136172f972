"""The ``chatmem`` command line: serve, worker, migrate, users, keys, embeddings (and, from
``ops.py``, backup, restore and config).

Every command builds its settings from the environment when it runs (``CHATMEM_DATABASE_URL``
etc.), so the same binary serves SQLite on a laptop and PostgreSQL behind a load balancer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

import typer
import uvicorn
from rich.console import Console
from rich.table import Table

from ..app import create_app, create_runtime
from ..auth import service
from ..db.engine import Database, is_sqlite
from ..embeddings import jobs as embedding_jobs
from ..embeddings import registry as embedders
from ..errors import ApiError
from ..observability import logs
from . import ops, portability
from .bootstrap import first_start, login_link
from .ops import checked, ensure_database, load_settings, prepare_or_exit


def _typer(help: str, **kw) -> typer.Typer:
    """A command group whose help is markdown: Typer then joins a docstring paragraph's wrapped
    lines in the command list too (rich mode printed every line break of it)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode="markdown", **kw)


app = _typer("chatmem: a chat backend for LLM products.", add_completion=False)
users_app = _typer("Manage users.")
keys_app = _typer("Manage API keys.")
embeddings_app = _typer("Vectors of messages and memories.")
app.add_typer(users_app, name="users")
app.add_typer(keys_app, name="keys")
app.add_typer(embeddings_app, name="embeddings")

console = Console()


def main() -> None:
    app()


def _run(coro):
    return asyncio.run(coro)


def _run_or_exit(fn):
    """Run ``fn(db, settings)``; an ApiError (bad email, unknown user…) exits 1 with its message."""
    try:
        return _run(_with_db(fn))
    except ApiError as e:
        console.print(f"[red]error:[/red] {e.message}")
        raise typer.Exit(1) from None


async def _with_db(fn):
    s = checked(load_settings())
    await ensure_database(s.database_url)  # exits when there is none: never creates one
    db = Database(s.database_url)
    try:
        return await fn(db, s)
    finally:
        await db.dispose()


@app.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    s = checked(load_settings())
    prepare_or_exit(s)
    console.print(f"migrated {s.database_url}")


@app.command()
def serve(
    host: str | None = typer.Option(
        None, help="Interface to bind (default CHATMEM_HOST or 127.0.0.1)."
    ),
    port: int | None = typer.Option(None, help="Port (default CHATMEM_PORT or 8000)."),
    no_worker: bool = typer.Option(
        False, "--no-worker", help="Do not run the job worker in this process."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="Server processes on one port (default: the cores on PostgreSQL, 1 on SQLite).",
    ),
) -> None:
    """Migrate, then serve the API and the web UI (plus the job worker unless --no-worker)."""
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    if no_worker:
        overrides["run_worker"] = False
    s = checked(load_settings(**overrides))
    n = workers or default_workers(s.database_url)
    if n > 1 and s.admin_listen:
        raise ops.fail(
            "CHATMEM_ADMIN_LISTEN serves one process's metrics: it needs --workers 1 "
            "(run more processes as replicas behind a load balancer instead)",
            ops.EXIT_CONFIG,
        )
    logs.configure(s.log_level, s.log_format)
    prepare_or_exit(s)
    _run(first_start(s))
    if n > 1:
        # each worker process builds its own app from the environment (uvicorn's factory):
        # the command-line overrides go there first, so every worker sees the same settings
        os.environ.update({"CHATMEM_HOST": s.host, "CHATMEM_PORT": str(s.port)})
        if not s.run_worker:
            os.environ["CHATMEM_RUN_WORKER"] = "false"
        logging.getLogger("chatmem.serve").info("starting %d worker processes", n)
    # proxy_headers off: uvicorn would trust 127.0.0.1 by default; the app believes forwarded
    # headers only from CHATMEM_TRUSTED_PROXIES (edge/headers.py). Logging is ours (one JSON
    # line per request from the request middleware), so uvicorn's config and access log are off.
    # The loop and the HTTP parser are uvicorn's "auto": uvloop and httptools, both dependencies
    # (~15 % of a turn's CPU, bench/turn_cost.py); asyncio and h11 where they cannot install.
    uvicorn.run(
        create_app(s) if n == 1 else "chatmem.cli.main:worker_app",
        factory=n > 1,
        workers=n if n > 1 else None,
        host=s.host,
        port=s.port,
        log_config=None,
        log_level=s.log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
        # a worker answers the supervisor's health ping only once its interpreter has imported
        # the app (seconds on a loaded host): uvicorn's 5 s default killed them while starting
        timeout_worker_healthcheck=60,
        proxy_headers=False,
    )


def default_workers(database_url: str) -> int:
    """Every core on PostgreSQL; one process on SQLite, whose writes take turns on one lock
    whatever the number of processes (``--workers N`` still works there, see README)."""
    return 1 if is_sqlite(database_url) else max(1, os.cpu_count() or 1)


def worker_app():
    """The app of one ``serve --workers N`` process (uvicorn calls it in each child): settings
    from the environment ``serve`` prepared, its own runtime — sweeper, job worker, leases — that
    coordinates with its siblings through the database exactly as replicas do."""
    s = load_settings()
    logs.configure(s.log_level, s.log_format)
    return create_app(s)


@app.command()
def worker() -> None:
    """Run background jobs (and the stale-turn sweeper) without serving HTTP."""
    s = checked(load_settings(run_worker=True))
    logs.configure(s.log_level, s.log_format)
    prepare_or_exit(s)

    async def run() -> None:
        rt = create_runtime(s)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await rt.start()
        logging.getLogger("chatmem.worker").info("worker running on %s", rt.db.dialect)
        try:
            await stop.wait()
        finally:
            await rt.stop()

    _run(run())


@users_app.command("create")
def users_create(
    email: str = typer.Option(..., "--email", help="Login email."),
    name: str = typer.Option("", "--name"),
    password: str | None = typer.Option(None, "--password", help="Enables web login."),
    admin: bool = typer.Option(False, "--admin"),
) -> None:
    """Create a user; the new API key is the last line of the output (shown once)."""
    user, key = _run_or_exit(lambda db, s: service.create_user(db, email, name, password, admin))
    console.print(f"created {user['role']} {user['email']} ({user['id']})")
    print(key)


@users_app.command("list")
def users_list() -> None:
    """List users."""
    rows = _run(_with_db(lambda db, s: service.list_users(db)))
    table = Table("id", "email", "name", "role")
    for u in rows:
        table.add_row(u["id"], u["email"], u["name"], u["role"])
    console.print(table)


@users_app.command("set-password")
def users_set_password(
    email: str = typer.Option(..., "--email", help="The user's email or id."),
    password: str | None = typer.Option(
        None, "--password", help="The new password (asked for, hidden, when left out)."
    ),
) -> None:
    """Set a user's web password (e.g. an admin locked out); their web sessions end."""
    if password is None:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)

    async def go(db, s):
        user = await service.find_user(db, email)
        return user.email, await service.set_password(db, user.id, password)

    who, ended = _run_or_exit(go)
    console.print(f"password set for {who}; {ended} web session(s) ended")


@users_app.command("login-link")
def users_login_link(
    email: str = typer.Option(..., "--email", help="The user's email or id."),
) -> None:
    """Print a fresh one-time login link (valid 24 h; base URL from CHATMEM_PUBLIC_URL or the
    host and port). The link is the last line of the output."""

    async def go(db, s):
        user = await service.find_user(db, email)
        return user.email, await login_link(db, s, user.id)

    who, link = _run_or_exit(go)
    console.print(f"one-time login link for {who} (valid 24 h):")
    print(link)


@keys_app.command("create")
def keys_create(
    email: str = typer.Option(..., "--email", help="The user's email or id."),
    name: str = typer.Option("", "--name", help="A label for the key."),
) -> None:
    """Create an API key for a user; the key is the last line of the output (shown once)."""

    async def go(db, s):
        user = await service.find_user(db, email)
        return await service.create_key(db, user.id, name)

    kid, key = _run_or_exit(go)
    console.print(f"created key {kid}")
    print(key)


@keys_app.command("revoke")
def keys_revoke(key: str = typer.Argument(..., help="The key's id or its shown prefix.")) -> None:
    """Revoke an API key (requests with it answer 401 from now on)."""
    n = _run(_with_db(lambda db, s: service.revoke_key(db, key)))
    if not n:
        console.print(f"[red]no active key {key!r}[/red]")
        raise typer.Exit(1)
    console.print(f"revoked {key}")


@keys_app.command("list")
def keys_list(email: str = typer.Option(..., "--email")) -> None:
    """List a user's keys (prefixes only; keys are never stored in clear)."""

    async def go(db, s):
        user = await service.find_user(db, email)
        return await service.list_keys(db, user.id)

    table = Table("id", "name", "prefix", "revoked")
    for k in _run_or_exit(go):
        table.add_row(k["id"], k["name"], k["prefix"], "yes" if k["revoked_at"] else "")
    console.print(table)


@embeddings_app.command("backfill")
def embeddings_backfill() -> None:
    """Queue embedding of all existing conversations and memories (the workers do the work)."""
    s = checked(load_settings())
    try:
        embedder = embedders.load(s)
    except ValueError as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None
    if embedder is None:
        console.print("[red]error:[/red] embeddings are off: set CHATMEM_EMBEDDER first")
        raise typer.Exit(1)
    got = _run(_with_db(lambda db, _s: embedding_jobs.backfill(db)))
    console.print(
        f"queued embedding for {got['conversations']} conversations and {got['users']} users "
        f"({embedders.model_key(s, embedder)})"
    )


portability.register(app, users_app, _run_or_exit)
ops.register(app)

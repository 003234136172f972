"""``chatmem import``, ``chatmem export`` and ``chatmem users delete``: the portability use-cases
from the command line, on the database of ``CHATMEM_DATABASE_URL``.

``import`` runs the import in the foreground (the same ``run_import`` the job runs; nothing is
queued, so no worker races it) with a Rich progress bar over the bytes read, and prints the
report. ``export`` writes the "all my data" zip (or one conversation, or the memories) to a file.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ..auth import service
from ..portability import account, exporter, importer

console = Console()


def _report(out: dict) -> None:
    rep = out["report"]
    conv = rep["conversations"]
    verb = "would import" if out["dry_run"] else "imported"
    table = Table("", "count", title=f"{out['format']} import {out['id']}: {out['status']}")
    table.add_row(f"conversations {verb}", str(conv["imported"]))
    for k in ("updated", "unchanged", "empty", "failed"):
        table.add_row(f"conversations {k}", str(conv[k]))
    table.add_row(f"messages {verb}", str(rep["messages"]["imported"]))
    for reason, n in sorted(rep["skipped"].items()):
        table.add_row(f"skipped: {reason}", str(n))
    if rep["replaced_bytes"]:
        table.add_row("invalid UTF-8 replaced", str(rep["replaced_bytes"]))
    console.print(table)
    for e in rep["errors"]:
        console.print(f"[red]conversation {e['index']} ({e['source_id']}): {e['message']}[/red]")
    for w in rep["warnings"][:20]:
        console.print(f"[yellow]conversation {w['index']}: {w['message']}[/yellow]")
    if out["error"]:
        console.print(f"[red]error:[/red] {out['error']}")


#: ``main._run_or_exit`` (run a coroutine on the configured database; an ApiError exits 1 with its
#: message), handed over by ``register`` — main imports this module, not the other way round
_RUNNER: list = []


def register(app: typer.Typer, users_app: typer.Typer, run_or_exit) -> None:
    _RUNNER[:] = [run_or_exit]
    app.command("import")(import_)
    app.command("export")(export)
    users_app.command("delete")(users_delete)


def import_(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    email: str = typer.Option(..., "--email", help="The user (email or id) to import into."),
    format: str = typer.Option(
        "auto", "--format", help="auto | chatgpt | claude | openwebui | librechat | chatmem"
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; write nothing."),
) -> None:
    """Import an export (JSON or its zip) from ChatGPT, Claude, Open WebUI, LibreChat or
    chatmem; safe to run again (nothing is imported twice). Exits 1 when the file cannot be read
    or every conversation in it failed."""

    local = str(file.resolve())

    async def go(db, s):
        user = await service.find_user(db, email)
        out = await importer.create_import(
            db,
            s,
            user.id,
            None,
            filename=file.name,
            fmt=format,
            dry_run=dry_run,
            local_path=local,
            queue=False,
        )
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("importing", total=out["bytes_total"] or None)

            def show(state: dict) -> None:
                n = state["conversations_processed"]
                bar.update(task, completed=state["bytes_read"], description=f"{n} conversations")

            return await importer.run_import(db, s, out["id"], progress=show)

    out = _RUNNER[0](go)
    _report(out)
    if out["status"] != "done" or _all_failed(out["report"]["conversations"]):
        raise typer.Exit(1)


def _all_failed(conv: dict) -> bool:
    """Every conversation of the file failed (a wrong --format, say): the run did nothing."""
    return conv["failed"] > 0 and not (conv["imported"] + conv["updated"] + conv["unchanged"])


def export(
    email: str = typer.Option(..., "--email", help="The user (email or id)."),
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write (default: a new file).")
    ] = None,
    conversation: str | None = typer.Option(
        None, "--conversation", help="Only this conversation (its id)."
    ),
    format: str = typer.Option("json", "--format", help="json | markdown | html"),
    memories: bool = typer.Option(False, "--memories", help="Only the memories, as JSON."),
) -> None:
    """Export a user's data: everything as a zip (default), one conversation, or memories."""

    if format not in exporter.FORMATS:
        console.print(f"[red]error:[/red] --format must be one of {', '.join(exporter.FORMATS)}")
        raise typer.Exit(2)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")

    async def go(db, s):
        user = await service.find_user(db, email)
        if conversation:
            body, name = await exporter.conversation_export(db, user.id, conversation, format)
            target = out or Path(name)
            await asyncio.to_thread(target.write_text, body, "utf-8")
            return target, None
        if memories:
            doc = await exporter.memories_export(db, user.id)
            target = out or Path(f"chatmem-memories-{stamp}.json")
            text = json.dumps(doc, ensure_ascii=False, indent=1, default=str)
            await asyncio.to_thread(target.write_text, text, "utf-8")
            return target, {"memories": len(doc["memories"])}
        target = out or Path(f"chatmem-export-{stamp}.zip")
        with console.status("writing the archive…"):
            counts = await exporter.write_archive(db, user.id, target.resolve())
        return target, counts

    target, counts = _RUNNER[0](go)
    summary = ", ".join(f"{v} {k}" for k, v in (counts or {}).items())
    console.print(f"wrote {target}" + (f" ({summary})" if summary else ""))


def users_delete(
    email: str = typer.Option(..., "--email", help="The user's email or id."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask (the email is the confirmation)."),
) -> None:
    """Delete a user and every row of theirs (conversations, memories, files…): final."""

    async def go(db, s):
        user = await service.find_user(db, email)
        if not yes:
            typed = await asyncio.to_thread(
                typer.prompt, f"Type {user.email} to delete this account and all its data"
            )
        else:
            typed = user.email
        return await account.delete_account(db, user.id, typed, actor="admin")

    res = _RUNNER[0](go)
    total = sum(v for k, v in res["deleted"].items())
    console.print(f"deleted {total} rows (audit {res['audit_id']})")

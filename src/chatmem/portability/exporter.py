"""Exports: one conversation (JSON tree, Markdown, printable HTML), memories as JSON, and the
"download all my data" archive built by a job.

Why it exists: people must be able to leave with everything they put in. The archive is a zip
written to ``transfer_dir`` one conversation at a time (memory stays flat however large the
account): ``conversations.json`` in chatmem's import format (so it can be imported here or
elsewhere as it is), a Markdown file per conversation for reading, ``memories.json`` with each
memory's history, ``agents.json``, ``projects.json``, ``feedback.json`` (ratings and problem
reports; screenshots as files), ``account.json`` (profile and settings, never the password hash
or keys) and a README. Archives are deleted ``export_ttl_s`` after they are built.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path

from ..conversations import forks
from ..cpu import run_text
from ..db import schema as t
from ..db.clock import now_ms
from ..db.engine import Database
from ..errors import Conflict
from ..jobs.queue import Permanent, enqueue
from . import files, render, store

EXPORT_JOB = "export.archive"
FORMATS = ("json", "markdown", "html")
MEDIA = {
    "json": "application/json",
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}
SUFFIX = {"json": "json", "markdown": "md", "html": "html"}
PRIVATE_USER_COLUMNS = ("password_hash",)

README = """chatmem data export

conversations.json   every conversation with its whole message tree (chatmem's import format:
                     chatmem import conversations.json, or POST /api/imports)
conversations/*.md   each conversation's active path, for reading
memories.json        memories with their full history of events
agents.json          companion agents
projects.json        projects
feedback.json        message ratings and problem reports (screenshots in feedback/)
account.json         profile and settings
Times are milliseconds since 1970-01-01 UTC.
"""


def _plain(row, drop=("user_id",)) -> dict:
    return {k: v for k, v in row._mapping.items() if k not in drop}


def _doc(conv, messages) -> dict:
    return render.conversation_doc(conv._mapping, [m._mapping for m in messages])


def filename_for(title: str, cid: str, fmt: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_ " else "_" for ch in (title or "conversation"))
    safe = "-".join(safe.split())[:60] or "conversation"
    return f"{safe}-{cid[-8:]}.{SUFFIX[fmt]}"


async def conversation_export(db: Database, user_id: str, cid: str, fmt: str) -> tuple[str, str]:
    """(body, file name) of one conversation in ``fmt``."""
    conv, messages = await _with_messages(db, user_id, cid)
    # rendering a long conversation takes tens of ms: on the text pool, not the event loop
    body = await run_text(render_export, conv, messages, fmt, now_ms())
    return body, filename_for(conv.title, cid, fmt)


def render_export(conv, messages, fmt: str, now: int) -> str:
    """One conversation's export body in ``fmt`` (CPU-bound: called on the text pool)."""
    doc = _doc(conv, messages)
    if fmt == "markdown":
        return render.markdown(doc)
    if fmt == "html":
        return render.html_page(doc)
    return json.dumps(render.document([doc], now), ensure_ascii=False, indent=1)


def _json_bytes(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str).encode()


def _doc_piece(conv, messages, first: bool) -> bytes:
    return (
        ("" if first else ",\n") + json.dumps(_doc(conv, messages), ensure_ascii=False)
    ).encode()


def _markdown(conv, messages) -> str:
    return render.markdown(_doc(conv, messages))


async def memories_export(db: Database, user_id: str) -> dict:
    """Every memory of the user (deleted ones included: they are still the user's data) with
    its events, oldest first."""
    async with db.read() as c:
        mems = await store.rows_of(
            c, t.memories, user_id, (t.memories.c.created_at, t.memories.c.id)
        )
        events = await store.rows_of(
            c, t.memory_events, user_id, (t.memory_events.c.created_at, t.memory_events.c.id)
        )
    history: dict[str, list] = {}
    for e in events:
        history.setdefault(e.memory_id, []).append(_plain(e, ("user_id", "memory_id")))
    return {
        "format": "chatmem.memories",
        "version": 1,
        "exported_at": now_ms(),
        "memories": [{**_plain(m), "history": history.get(m.id, [])} for m in mems],
    }


def export_dir(settings) -> Path:
    d = Path(settings.transfer_dir) / "exports"
    d.mkdir(parents=True, exist_ok=True)
    return d


def export_out(row) -> dict:
    m = row._mapping
    return {
        "id": m["id"],
        "status": m["status"],
        "size_bytes": m["size_bytes"],
        "counts": m["counts"] or {},
        "error": m["error"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "expires_at": m["expires_at"],
        "download_url": f"/api/exports/{m['id']}/download" if m["status"] == "done" else None,
    }


async def create_export(db: Database, user_id: str) -> dict:
    async with db.write() as c:
        eid = await store.insert_export(c, user_id)
        await enqueue(c, EXPORT_JOB, {"export_id": eid, "user_id": user_id}, dedupe_key=eid)
        row = await store.get_export(c, user_id, eid)
    return export_out(row)


async def get_export(db: Database, user_id: str, eid: str) -> dict:
    async with db.read() as c:
        return export_out(await store.get_export(c, user_id, eid))


async def list_exports(db: Database, user_id: str, limit: int = 20) -> dict:
    async with db.read() as c:
        return {"items": [export_out(r) for r in await store.list_exports(c, user_id, limit)]}


async def export_file(db: Database, user_id: str, eid: str) -> Path:
    async with db.read() as c:
        row = await store.get_export(c, user_id, eid)
    path = Path(row.path) if row.path else None
    if row.status != "done" or path is None or not await files.is_file(path):
        raise Conflict("the export is not ready (or has expired)", code="export_not_ready")
    return path


async def _write_json(z: zipfile.ZipFile, name: str, value) -> None:
    data = await run_text(_json_bytes, value)  # a large export encodes for a while
    await asyncio.to_thread(z.writestr, name, data)


async def _with_messages(db: Database, user_id: str, cid: str):
    """(conversation, its messages); a fork still being copied is copied first
    (conversations/forks.py) — a write only then."""
    async with db.read() as c:
        conv, messages = await store.conversation_with_messages(c, user_id, cid)
    if conv.fork_source_id is None:
        return conv, messages
    await forks.settle(db, cid)
    async with db.read() as c:
        return await store.conversation_with_messages(c, user_id, cid)


async def write_archive(db: Database, user_id: str, path: Path) -> dict:
    """Build the archive of ``user_id`` at ``path``; returns the counts written."""
    counts = {"conversations": 0, "messages": 0}
    async with db.read() as c:
        ids = await store.conversation_ids(c, user_id)
        user = await store.user_row(c, user_id)
    tmp = path.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        await asyncio.to_thread(z.writestr, "README.txt", README)
        await _write_json(z, "account.json", _plain(user, PRIVATE_USER_COLUMNS))
        with z.open("conversations.json", "w") as out:
            head = json.dumps(
                {"format": render.FORMAT, "version": render.VERSION, "exported_at": now_ms()}
            )
            await asyncio.to_thread(out.write, (head[:-1] + ', "conversations": [\n').encode())
            for i, cid in enumerate(ids):
                conv, messages = await _with_messages(db, user_id, cid)
                piece = await run_text(_doc_piece, conv, messages, i == 0)
                await asyncio.to_thread(out.write, piece)
                counts["conversations"] += 1
                counts["messages"] += len(messages)
            await asyncio.to_thread(out.write, b"\n]}\n")
        for cid in ids:  # a second pass: one zip member is written at a time
            conv, messages = await _with_messages(db, user_id, cid)
            md_name = f"conversations/{filename_for(conv.title, cid, 'markdown')}"
            md = await run_text(_markdown, conv, messages)
            await asyncio.to_thread(z.writestr, md_name, md)
        mems = await memories_export(db, user_id)
        counts["memories"] = len(mems["memories"])
        await _write_json(z, "memories.json", mems)
        async with db.read() as c:
            agents = await store.rows_of(c, t.agents, user_id, (t.agents.c.created_at,))
            projects = await store.rows_of(c, t.projects, user_id, (t.projects.c.created_at,))
            ratings = await store.rows_of(
                c, t.message_feedback, user_id, (t.message_feedback.c.created_at,)
            )
            reports = await store.rows_of(
                c, t.user_feedback, user_id, (t.user_feedback.c.created_at,)
            )
        counts.update(
            agents=len(agents), projects=len(projects), feedback=len(ratings) + len(reports)
        )
        await _write_json(z, "agents.json", [_plain(r) for r in agents])
        await _write_json(z, "projects.json", [_plain(r) for r in projects])
        report_list = []
        for r in reports:
            item = _plain(r, ("user_id", "screenshot"))
            if r.screenshot:
                ext = "png" if r.screenshot_mime == "image/png" else "jpg"
                item["screenshot_file"] = f"feedback/{r.id}.{ext}"
                await asyncio.to_thread(z.writestr, item["screenshot_file"], bytes(r.screenshot))
            report_list.append(item)
        await _write_json(
            z, "feedback.json", {"ratings": [_plain(r) for r in ratings], "reports": report_list}
        )
    tmp.replace(path)
    return counts


async def run_export(db: Database, settings, eid: str) -> dict:
    async with db.read() as c:
        row = await store.get_export(c, None, eid)
    if row.status in ("done", "failed"):
        return export_out(row)
    async with db.write() as c:
        await store.update_export(c, eid, status="running")
    path = export_dir(settings) / f"{eid}.zip"
    try:
        counts = await write_archive(db, row.user_id, path)
    except Exception as e:  # the user may ask again; a half-built archive is never offered
        async with db.write() as c:
            await store.update_export(
                c,
                eid,
                status="failed",
                error=f"the archive could not be built ({type(e).__name__})",
            )
        await files.remove(path.with_suffix(".part"))
        raise Permanent(str(e)) from e
    now = now_ms()
    async with db.write() as c:
        await store.update_export(
            c,
            eid,
            status="done",
            path=str(path),
            size_bytes=await files.size(path),
            counts=counts,
            expires_at=now + settings.export_ttl_s * 1000,
        )
        expired = await store.expired_exports(c, now)
        for old in expired:
            await files.remove(old.path)
            await store.delete_export_row(c, old.id)
        row = await store.get_export(c, None, eid)
    return export_out(row)


async def export_job(rt, payload: dict) -> None:
    await run_export(rt.db, rt.settings, payload["export_id"])

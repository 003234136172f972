"""Imports: an upload becomes a job that streams the file into conversations.

Why it exists: people arrive with years of chats elsewhere. ``create_import`` stores the upload
under ``transfer_dir`` (streamed to disk, never held in memory), recognises the format at once
(an unreadable or unknown file answers 422 and nothing is kept) and queues one ``import.run`` job.
``run_import`` — the job, also run in the foreground by ``chatmem import`` — reads one source
conversation at a time and writes each in **one transaction**: its conversation row, all its
messages (multi-row inserts), its provenance row, the import's progress counters and the
follow-up jobs, so a conversation is imported whole or not at all, and a job that dies resumes
after the last committed conversation (``items_done``).

Idempotency: ``import_sources`` maps (user, format, source conversation id) to the conversation it
became, and every imported message keeps its source id in ``metadata.import``. Importing the same
file again creates nothing; importing a later export of the same account adds only the messages
that are new (a conversation that grew since) under the parents they had. A chatmem export
imported into the account it came from is recognised by its conversation ids and skipped.

Dry run: the same parse, repair and provenance lookups (a file imported before reports its
conversations unchanged, a grown one the messages it would add), nothing written but the report;
``commit_import`` then runs the stored upload for real without uploading it again.

Catching up: each written conversation schedules the same follow-up work as a log-mode append
(``followups.after_append`` with the log window) — one debounced job stream per conversation,
whatever its message count: memory extraction then walks the imported active path in batches,
compaction checks it, embeddings are computed; the full-text index is kept by triggers.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..conversations import followups
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..errors import Conflict, TooLarge, Unprocessable
from ..i18n import default_title, pick_language
from ..jobs.queue import Permanent, enqueue
from ..unicode import scrub
from . import files, formats, source, store, tree
from .model import ConversationError, Plan

IMPORT_JOB = "import.run"
MAX_LISTED = 200  # errors and warnings kept in a report (the counts stay exact)
PROGRESS_EVERY_MS = 500
FORMATS = ("auto", *formats.NAMES)

Progress = Callable[[dict], Any]


def import_dir(settings) -> Path:
    d = Path(settings.transfer_dir) / "imports"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _copy_limited(src, dst: Path, limit: int) -> int:
    n = 0
    with open(dst, "wb") as out:
        while chunk := src.read(1 << 20):
            n += len(chunk)
            if n > limit:
                raise TooLarge(f"the upload is larger than {limit} bytes", details={"limit": limit})
            out.write(chunk)
    return n


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise Unprocessable(
            f"format must be one of {', '.join(FORMATS)}",
            code="invalid_format",
            details={"format": fmt},
        )
    return fmt


def _probe(path: Path, fmt: str) -> tuple[str, int]:
    """(format, bytes to read) or an Unprocessable naming what is wrong with the file."""
    try:
        src = source.open_source(path)
        found, _prefix = source.sniff(src)
    except source.SourceError as e:
        if fmt != "auto" and e.code == "unknown_format":
            return fmt, src.total
        raise Unprocessable(e.message, code=e.code) from None
    return (found if fmt == "auto" else fmt), src.total


async def create_import(
    db: Database,
    settings,
    user_id: str,
    upload,
    *,
    filename: str,
    fmt: str = "auto",
    dry_run: bool = False,
    local_path: str | None = None,
    queue: bool = True,
) -> dict:
    """Store ``upload`` (a binary file object) — or, from the CLI, name ``local_path`` in place —
    recognise its format and queue the import job (``queue=False``: the caller runs
    ``run_import`` itself, in the foreground, so no worker races it)."""
    _check_format(fmt)
    await sweep_uploads(db, settings)
    iid = new_id("imp")
    if local_path is not None:
        path, owns = Path(local_path), False  # the CLI passes it absolute
        if not await files.is_file(path):
            raise Unprocessable(f"no such file: {local_path}", code="not_found")
    else:
        path, owns = import_dir(settings) / f"{iid}.upload", True
        await asyncio.to_thread(_copy_limited, upload, path, settings.max_import_bytes)
    try:
        if await files.size(path) == 0:
            raise Unprocessable("the file is empty", code="empty_file")
        detected, total = await asyncio.to_thread(_probe, path, fmt)
        async with db.write() as c:
            await store.insert_import(
                c,
                user_id,
                iid,
                format=detected,
                requested_format=fmt,
                filename=scrub(filename)[:500],
                dry_run=int(dry_run),
                path=str(path),
                owns_file=int(owns),
                bytes_total=total,
            )
            if queue:
                await enqueue(c, IMPORT_JOB, {"import_id": iid, "user_id": user_id}, dedupe_key=iid)
            row = await store.get_import(c, user_id, iid)
    except BaseException:
        if owns:
            await files.remove(path)
        raise
    return import_out(row)


async def sweep_uploads(db: Database, settings) -> None:
    """Remove uploads kept longer than ``export_ttl_s`` after their import finished (a dry run
    that was never committed keeps its upload until then)."""
    async with db.write() as c:
        stale = await store.stale_uploads(c, now_ms() - settings.export_ttl_s * 1000)
        for row in stale:
            await store.update_import(c, row.id, path="")
    await files.remove(*(r.path for r in stale))


async def commit_import(db: Database, user_id: str, iid: str) -> dict:
    """Run a finished dry run's upload for real."""
    async with db.write() as c:
        row = await store.get_import(c, user_id, iid)
        if not (row.dry_run and row.status == "done" and await files.is_file(row.path)):
            raise Conflict("only a finished dry run whose upload is kept can be committed")
        await store.update_import(
            c,
            iid,
            dry_run=0,
            status="queued",
            items_done=0,
            bytes_read=0,
            report={},
            error="",
            finished_at=None,
        )
        await enqueue(c, IMPORT_JOB, {"import_id": iid, "user_id": user_id}, dedupe_key=iid)
        row = await store.get_import(c, user_id, iid)
    return import_out(row)


async def get_import(db: Database, user_id: str, iid: str) -> dict:
    async with db.read() as c:
        return import_out(await store.get_import(c, user_id, iid))


async def list_imports(db: Database, user_id: str, limit: int = 50) -> dict:
    async with db.read() as c:
        return {"items": [import_out(r) for r in await store.list_imports(c, user_id, limit)]}


def empty_report() -> dict:
    return {
        "conversations": {"imported": 0, "updated": 0, "unchanged": 0, "failed": 0, "empty": 0},
        "messages": {"imported": 0},
        "skipped": {},
        "errors": [],
        "warnings": [],
        "replaced_bytes": 0,
    }


def import_out(row) -> dict:
    m = row._mapping
    report = {**empty_report(), **(m["report"] or {})}
    total = m["bytes_total"] or 0
    return {
        "id": m["id"],
        "status": m["status"],
        "format": m["format"],
        "requested_format": m["requested_format"],
        "filename": m["filename"],
        "dry_run": bool(m["dry_run"]),
        "bytes_total": total,
        "bytes_read": m["bytes_read"],
        "progress": 1.0
        if m["status"] == "done"
        else min(1.0, m["bytes_read"] / total)
        if total
        else 0.0,
        "conversations_processed": m["items_done"],
        "report": report,
        "error": m["error"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "finished_at": m["finished_at"],
    }


# ── the job ─────────────────────────────────────────────────────────────────────────────────────


def _scrub_deep(v: Any) -> Any:
    if isinstance(v, str):
        return scrub(v)
    if isinstance(v, list):
        return [_scrub_deep(x) for x in v]
    if isinstance(v, dict):
        return {scrub(k) if isinstance(k, str) else k: _scrub_deep(x) for k, x in v.items()}
    return v


def _check_sizes(p: Plan, limit: int) -> None:
    for pm in p.messages:
        pm.blocks = _scrub_deep(pm.blocks)
        size = len(json.dumps(pm.blocks, ensure_ascii=False).encode())
        if size > limit:
            raise ConversationError(
                "message_too_large",
                f"message {pm.source_id} is {size} bytes; the limit is {limit} "
                "(CHATMEM_MAX_MESSAGE_BYTES)",
            )


def _provenance(fmt: str, pm) -> dict:
    src: dict = {"format": fmt, "id": pm.source_id}
    if pm.merged_ids:
        src["merged"] = pm.merged_ids
    return {**pm.metadata, "import": src}


def _new_rows(p: Plan, ids: dict[str, str], *, cid: str, user_id: str, fmt: str) -> list[dict]:
    """Rows for the planned messages not imported before (``ids``: source id → chatmem id,
    filled in as rows are made, so a new message finds a parent imported earlier)."""
    rows = []
    for pm in p.messages:
        known = next((ids[m] for m in (pm.source_id, *pm.merged_ids) if m in ids), None)
        if known is not None:  # imported before (a grown conversation adds only the rest)
            ids.setdefault(pm.source_id, known)
            continue
        mid = ids[pm.source_id] = new_id("msg")
        parent = ids.get(pm.parent_source_id) if pm.parent_source_id else None
        meta = _provenance(fmt, pm)
        rows.append(
            store.message_row(
                mid=mid, cid=cid, user_id=user_id, parent_id=parent, pm=pm, metadata=meta
            )
        )
    return rows


async def _changes(c, *, user_id: str, fmt: str, p: Plan):
    """What importing ``p`` would write (reads only): (existing conversation id or None, the
    new message rows, source id → chatmem id); no rows when it is all here already."""
    sc = p.source
    existing = await store.source_conversation(c, user_id, fmt, sc.id)
    if existing is None and fmt == "chatmem" and await store.owns_conversation(c, user_id, sc.id):
        return None, [], {}  # the account this export came from: the original is here
    ids: dict[str, str] = await store.imported_messages(c, existing) if existing else {}
    cid = existing or new_id("c")
    return existing, _new_rows(p, ids, cid=cid, user_id=user_id, fmt=fmt), ids


async def _dry_outcome(
    db: Database, *, user_id: str, fmt: str, p: Plan, seen: dict[str, set[str]]
) -> tuple[str, int]:
    """A dry run's answer for one conversation: what a real run would do now. ``seen`` holds,
    per source conversation id, the message source ids this dry run already counted: a
    conversation that comes twice in one file is written once by a real run (the second time
    it is unchanged, or updated with the messages it adds), so it is counted so here too."""
    async with db.read() as c:
        existing, rows, _ids = await _changes(c, user_id=user_id, fmt=fmt, p=p)
    earlier = seen.get(p.source.id)
    if earlier is not None:
        rows = [r for r in rows if r["metadata"]["import"]["id"] not in earlier]
    seen.setdefault(p.source.id, set()).update(
        x for pm in p.messages for x in (pm.source_id, *pm.merged_ids)
    )
    if not rows:
        return "unchanged", 0
    return ("updated" if existing or earlier is not None else "imported"), len(rows)


async def _write(c, *, user_id: str, iid: str, fmt: str, p: Plan, title: str, delay_ms: int):
    """One conversation: ("imported" | "updated" | "unchanged", messages written)."""
    sc = p.source
    existing, rows, ids = await _changes(c, user_id=user_id, fmt=fmt, p=p)
    if not rows:
        return "unchanged", 0
    cid = rows[0]["conversation_id"]
    leaf = ids.get(p.leaf_source_id) if p.leaf_source_id else None
    newest = max(r["created_at"] for r in rows)
    if existing:
        await store.insert_messages(c, rows)
        await store.grow_conversation(c, cid, len(rows), newest, leaf)
    else:
        model = sc.model or next((m.model for m in p.messages if m.model), "")
        await store.insert_conversation(
            c,
            dict(
                id=cid,
                user_id=user_id,
                title=title,
                model_id=model,
                pinned=int(sc.pinned),
                starred=int(sc.starred),
                archived=int(sc.archived),
                active_leaf_id=leaf,
                message_count=len(rows),
                last_message_at=newest,
                created_at=p.created_at,
                updated_at=p.updated_at,
            ),
        )
        await store.insert_messages(c, rows)
        await store.add_source(c, user_id, fmt, sc.id, cid, iid)
    await followups.after_append(
        c,
        conversation_id=cid,
        user_id=user_id,
        message_id=leaf or rows[-1]["id"],
        delay_ms=delay_ms,
    )
    return ("updated" if existing else "imported"), len(rows)


def _note(report: dict, key: str, item: dict) -> None:
    if len(report[key]) < MAX_LISTED:
        report[key].append(item)


async def _user_language(db: Database, user_id: str) -> str:
    async with db.read() as c:
        user = await store.user_row(c, user_id)
    return pick_language((user.settings or {}).get("language"))


class _Run:
    """One pass over an import's file: per conversation, parse → repair → write (or count)."""

    def __init__(self, db: Database, settings, row, title: str, progress: Progress | None):
        self.db, self.settings, self.row = db, settings, row
        self.title, self.progress = title, progress
        self.iid, self.fmt, self.dry = row.id, row.format, bool(row.dry_run)
        self.report = {**empty_report(), **(row.report or {})}
        self.skipped = Counter(self.report["skipped"])
        self.done = row.items_done  # committed by earlier attempts: skipped on a resume
        self.src = source.open_source(row.path)
        self.bytes = 0
        self.last_tick = 0
        self.dry_seen: dict[str, set[str]] = {}  # a dry run's conversations so far (source ids)

    def _plan(self, index: int, obj) -> Plan | None:
        """The repaired conversation, or None (counted: empty, or failed with its error)."""
        sid = None
        try:
            sc = formats.PARSERS[self.fmt](obj, self.src.files)
            sid = sc.id
            p = tree.plan(sc, now=now_ms())
            _check_sizes(p, self.settings.max_message_bytes)
        except ConversationError as e:
            if e.code == "empty":
                self.report["conversations"]["empty"] += 1
            else:
                self.report["conversations"]["failed"] += 1
                err = {"index": index, "source_id": sid, "code": e.code, "message": e.message}
                _note(self.report, "errors", err)
            return None
        self.skipped.update(p.skipped)
        for w in p.warnings:
            _note(self.report, "warnings", {"index": index, "source_id": sid, "message": w})
        return p

    async def _save_progress(self, c) -> None:
        self.report["skipped"] = dict(self.skipped)
        await store.update_import(
            c, self.iid, items_done=self.done, bytes_read=self.bytes, report=self.report
        )

    async def item(self, index: int, obj) -> None:
        p = self._plan(index, obj)
        self.done = index + 1
        if p is None and not self.dry:  # counted now: a resumed job must not count it twice
            async with self.db.write() as c:
                await self._save_progress(c)
            await self.tick(saved=True)
            return
        if p is None or self.dry:
            if p is not None:  # what a real run would do now (a file imported before: nothing)
                outcome, n = await _dry_outcome(
                    self.db, user_id=self.row.user_id, fmt=self.fmt, p=p, seen=self.dry_seen
                )
                self.report["conversations"][outcome] += 1
                self.report["messages"]["imported"] += n
            await self.tick()
            return
        async with self.db.write() as c:  # the conversation and the progress that counts it
            outcome, n = await _write(
                c,
                user_id=self.row.user_id,
                iid=self.iid,
                fmt=self.fmt,
                p=p,
                title=scrub(p.source.title)[:500] or self.title,
                delay_ms=self.settings.log_followup_delay_ms,
            )
            self.report["conversations"][outcome] += 1
            self.report["messages"]["imported"] += n
            await self._save_progress(c)
        await self.tick(saved=True)

    async def tick(self, *, saved: bool = False) -> None:
        """Progress every PROGRESS_EVERY_MS: the row (unless just saved) and the callback."""
        now = now_ms()
        if now - self.last_tick < PROGRESS_EVERY_MS:
            return
        self.last_tick = now
        if not saved:
            async with self.db.write() as c:
                await self._save_progress(c)
        if self.progress is not None:
            self.report["skipped"] = dict(self.skipped)
            self.progress(
                {
                    "id": self.iid,
                    "status": "running",
                    "bytes_read": self.bytes,
                    "bytes_total": self.src.total,
                    "conversations_processed": self.done,
                    "report": self.report,
                }
            )

    async def read_all(self) -> str:
        """Every conversation of the file; the error that stopped the reading ('' if none)."""
        with self.src.open() as stream:
            prefix = source.default_prefix(self.fmt, self.src)
            it = enumerate(source.items(stream, prefix))
            while True:
                try:
                    nxt = await asyncio.to_thread(next, it, None)
                except Exception as e:  # ijson: the file breaks off or is not JSON from here on
                    return f"the file is not valid JSON after {self.done} conversation(s): {e}"[
                        :500
                    ]
                finally:
                    self.bytes, self.report["replaced_bytes"] = stream.consumed, stream.replaced
                if nxt is None:
                    return ""
                if nxt[0] >= self.done:  # else committed by an earlier attempt of this job
                    await self.item(*nxt)

    async def finish(self, error: str) -> dict:
        self.report["skipped"] = dict(self.skipped)
        keep = self.dry or not self.row.owns_file
        async with self.db.write() as c:
            await store.update_import(
                c,
                self.iid,
                status="failed" if error else "done",
                error=error,
                items_done=self.done,
                bytes_read=self.bytes,
                report=self.report,
                finished_at=now_ms(),
                path=self.row.path if keep else "",
            )
            row = await store.get_import(c, None, self.iid)
        if not keep:
            await files.remove(self.row.path)
        return import_out(row)


async def run_import(db: Database, settings, iid: str, progress: Progress | None = None) -> dict:
    """Run (or resume) import ``iid``; returns its final state (``import_out``)."""
    async with db.read() as c:
        row = await store.get_import(c, None, iid)
    if row.status in ("done", "failed"):
        return import_out(row)
    if not await files.is_file(row.path):
        async with db.write() as c:
            await store.update_import(
                c,
                iid,
                status="failed",
                error="the upload is not on this machine (share CHATMEM_TRANSFER_DIR between "
                "replicas, or run the worker where uploads arrive)",
                finished_at=now_ms(),
            )
        raise Permanent("the upload is not on this machine")
    title = default_title(await _user_language(db, row.user_id))
    async with db.write() as c:
        await store.update_import(c, iid, status="running")
    run = _Run(db, settings, row, title, progress)
    out = await run.finish(await run.read_all())
    if progress is not None:
        progress(out)
    return out


async def import_job(rt, payload: dict) -> None:
    await run_import(rt.db, rt.settings, payload["import_id"])

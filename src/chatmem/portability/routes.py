"""Portability routes: imports, exports, and account deletion (auth, one service call, contract)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi.responses import FileResponse, Response

from ..auth.deps import CurrentAdmin, CurrentUser, RuntimeDep
from ..contracts.errors import AUTHED, errors
from ..contracts.openapi import schema_ref
from . import account, exporter, importer
from .render import PAGE_CSP
from .wire import (
    DeleteAccountIn,
    DeletionOut,
    DeletionPage,
    ExportDocument,
    ExportOut,
    ExportPage,
    ImportOut,
    ImportPage,
    MemoriesExport,
)

router = APIRouter(tags=["portability"], responses=errors(*AUTHED))

ImportFormat = Literal["auto", "chatgpt", "claude", "openwebui", "librechat", "chatmem"]


@router.post("/api/imports", status_code=202, response_model=ImportOut, responses=errors(413))
async def start_import(
    p: CurrentUser,
    rt: RuntimeDep,
    file: Annotated[UploadFile, File(description="the export: JSON, or the zip as downloaded")],
    format: Annotated[ImportFormat, Form()] = "auto",
    dry_run: Annotated[bool, Form(description="report only; commit it later")] = False,
):
    """Upload an export from ChatGPT, Claude, Open WebUI, LibreChat or chatmem. The import runs
    as a job: poll ``GET /api/imports/{id}`` for progress and its report."""
    return await importer.create_import(
        rt.db,
        rt.settings,
        p.id,
        file.file,
        filename=file.filename or "",
        fmt=format,
        dry_run=dry_run,
    )


@router.get("/api/imports", response_model=ImportPage)
async def list_imports(
    p: CurrentUser, rt: RuntimeDep, limit: Annotated[int, Query(ge=1, le=200)] = 50
):
    return await importer.list_imports(rt.db, p.id, limit)


@router.get("/api/imports/{iid}", response_model=ImportOut, responses=errors(404))
async def get_import(iid: str, p: CurrentUser, rt: RuntimeDep):
    return await importer.get_import(rt.db, p.id, iid)


@router.post(
    "/api/imports/{iid}/commit",
    status_code=202,
    response_model=ImportOut,
    responses=errors(404, 409),
)
async def commit_import(iid: str, p: CurrentUser, rt: RuntimeDep):
    """Import a finished dry run's upload for real (no second upload)."""
    return await importer.commit_import(rt.db, p.id, iid)


@router.get(
    "/api/conversations/{cid}/export",
    response_class=Response,
    responses={
        **errors(404),
        200: {
            "description": "json: the whole tree (chatmem's import format); markdown and html: "
            "the active path (html is a printable page)",
            "content": {
                "application/json": {"schema": schema_ref(ExportDocument)},
                "text/markdown": {"schema": {"type": "string"}},
                "text/html": {"schema": {"type": "string"}},
            },
        },
    },
)
async def export_conversation(
    cid: str, p: CurrentUser, rt: RuntimeDep, format: Literal["json", "markdown", "html"] = "json"
):
    body, name = await exporter.conversation_export(rt.db, p.id, cid, format)
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format == "html":
        headers["Content-Security-Policy"] = PAGE_CSP
    return Response(body, media_type=exporter.MEDIA[format], headers=headers)


@router.get("/api/exports/memories", response_model=MemoriesExport)
async def export_memories(p: CurrentUser, rt: RuntimeDep):
    """Every memory with its history of events."""
    return await exporter.memories_export(rt.db, p.id)


@router.post("/api/exports", status_code=202, response_model=ExportOut)
async def start_export(p: CurrentUser, rt: RuntimeDep):
    """ "Download all my data": a zip built by a job; poll it, then download it."""
    return await exporter.create_export(rt.db, p.id)


@router.get("/api/exports", response_model=ExportPage)
async def list_exports(
    p: CurrentUser, rt: RuntimeDep, limit: Annotated[int, Query(ge=1, le=100)] = 20
):
    return await exporter.list_exports(rt.db, p.id, limit)


@router.get("/api/exports/{eid}", response_model=ExportOut, responses=errors(404))
async def get_export(eid: str, p: CurrentUser, rt: RuntimeDep):
    return await exporter.get_export(rt.db, p.id, eid)


@router.get(
    "/api/exports/{eid}/download",
    response_class=FileResponse,
    responses={
        **errors(404, 409),
        200: {
            "description": "the archive",
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        },
    },
)
async def download_export(eid: str, p: CurrentUser, rt: RuntimeDep):
    path = await exporter.export_file(rt.db, p.id, eid)
    return FileResponse(
        path,
        media_type="application/zip",
        filename=f"chatmem-export-{eid[-8:]}.zip",
        headers={"Cache-Control": "private, no-store"},
    )


@router.delete("/api/account", response_model=DeletionOut, responses=errors(404, 409))
async def delete_my_account(body: DeleteAccountIn, p: CurrentUser, rt: RuntimeDep):
    """Delete the caller's account and every row of it; ``confirm`` is the account's email."""
    return await account.delete_account(rt.db, p.id, body.confirm, actor="self")


@router.delete("/api/admin/users/{uid}", response_model=DeletionOut, responses=errors(404, 409))
async def delete_user(uid: str, body: DeleteAccountIn, admin: CurrentAdmin, rt: RuntimeDep):
    """Admins: delete a user and every row of theirs (``confirm``: that user's email)."""
    actor = "self" if uid == admin.id else "admin"
    return await account.delete_account(
        rt.db, uid, body.confirm, actor=actor, actor_id="" if actor == "self" else admin.id
    )


@router.get("/api/admin/account-deletions", response_model=DeletionPage)
async def list_deletions(
    _a: CurrentAdmin, rt: RuntimeDep, limit: Annotated[int, Query(ge=1, le=500)] = 100
):
    """The deletion audit: who acted and how many rows each table lost — nothing else."""
    return await account.list_deletions(rt.db, limit)

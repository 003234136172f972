"""Project use-cases. Names are unique per (user, workspace) ignoring case and surrounding spaces —
enforced by the database's expression index, reported to the caller as a 409."""

from __future__ import annotations

from pydantic import Field
from sqlalchemy.exc import IntegrityError

from ..auth.models import Principal
from ..contracts.base import Input, Name, Output
from ..db.clock import now_ms
from ..db.engine import Database
from ..db.ids import new_id
from ..errors import Conflict, Forbidden
from ..workspaces import store as workspaces_store
from . import store

FLAGS = ("pinned", "auto_add_uploads", "is_public")


class ProjectIn(Input):
    name: Name
    description: str = Field(default="", max_length=2000)
    instructions: str = Field(default="", max_length=20000)
    accent: str = Field(default="violet", min_length=1, max_length=32)
    emoji: str = Field(default="", max_length=16)
    pinned: bool = False
    auto_add_uploads: bool = False
    is_public: bool = Field(
        default=True,
        description="workspace projects: shared with members (else only its creator and the "
        "workspace admins see it); ignored for personal ones",
    )
    workspace_id: str | None = Field(
        default=None, min_length=1, max_length=64, description="create it in this workspace"
    )


class ProjectPatch(Input):
    name: Name | None = None
    description: str | None = Field(default=None, max_length=2000)
    instructions: str | None = Field(default=None, max_length=20000)
    accent: str | None = Field(default=None, min_length=1, max_length=32)
    emoji: str | None = Field(default=None, max_length=16)
    pinned: bool | None = None
    auto_add_uploads: bool | None = None
    is_public: bool | None = None


class ProjectOut(Output):
    id: str
    name: str
    description: str
    instructions: str
    accent: str
    emoji: str
    pinned: bool
    kb_id: str | None
    auto_add_uploads: bool
    is_public: bool
    workspace_id: str
    created_at: int
    updated_at: int


def project_out(row) -> dict:
    m = dict(row._mapping)
    for k in FLAGS:
        m[k] = bool(m[k])
    m.pop("user_id", None)
    return m


def _values(data: dict) -> dict:
    return {k: (int(v) if k in FLAGS else v) for k, v in data.items()}


async def _get(c, p: Principal, pid: str):
    return await store.get_owned(c, p.id, pid)


def _dup(name: str) -> Conflict:
    return Conflict(f"a project named {name!r} already exists", code="duplicate_name")


async def _manageable(c, p: Principal, pid: str):
    row = await _get(c, p, pid)
    if not await workspaces_store.may_manage(c, p.id, row):
        raise Forbidden(
            "only the project's creator or a workspace admin may do this", code="workspace_role"
        )
    return row


async def create(db: Database, p: Principal, body: ProjectIn) -> dict:
    now = now_ms()
    pid = new_id("p")
    data = body.model_dump()
    wid = data.pop("workspace_id") or ""
    try:
        async with db.write() as c:
            if wid:
                await workspaces_store.get_for_member(c, p.id, wid)
            await store.insert_project(
                c,
                id=pid,
                user_id=p.id,
                created_at=now,
                updated_at=now,
                workspace_id=wid,
                **_values(data),
            )
            row = await _get(c, p, pid)
    except IntegrityError:
        raise _dup(body.name) from None
    return project_out(row)


async def list_(db: Database, p: Principal, workspace_id: str = "") -> dict:
    async with db.read() as c:
        if workspace_id:
            await workspaces_store.get_for_member(c, p.id, workspace_id)
        rows = await store.list_personal(c, p.id, workspace_id)
    return {"items": [project_out(r) for r in rows], "next_cursor": None}


async def get(db: Database, p: Principal, pid: str) -> dict:
    async with db.read() as c:
        return project_out(await _get(c, p, pid))


async def patch(db: Database, p: Principal, pid: str, body: ProjectPatch) -> dict:
    changes = {k: v for k, v in body.model_dump(exclude_unset=True).items() if v is not None}
    try:
        async with db.write() as c:
            await _manageable(c, p, pid)
            if changes:
                await store.update_project(c, pid, updated_at=now_ms(), **_values(changes))
            row = await _get(c, p, pid)
    except IntegrityError:
        raise _dup(changes.get("name", "")) from None
    return project_out(row)


async def remove(db: Database, p: Principal, pid: str) -> None:
    """Delete a project; its conversations stay, detached (conversations.project_id SET NULL)."""
    async with db.write() as c:
        await _manageable(c, p, pid)
        await store.delete_project(c, pid)

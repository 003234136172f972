"""A workspace's shared memory (issue 16, item 4): members read it, owners/admins manage it.

Why it exists: the memory domain already has the policy (slots, supersession, validity) and the
audit trail (one ``memory_events`` row per change); this use-case adds the workspace's rules on
top and runs the same functions on the workspace's scope (``memory.store.InWorkspace``). A
non-member gets 404 (like any workspace row), a plain member 403 for a change. Workspace
conversations inject this memory (``memory.hooks``) and never the member's personal memory; it
is written only here, by hand (nothing is extracted from workspace conversations).
"""

from __future__ import annotations

from ..auth.models import Principal
from ..db.engine import Database
from ..memory import service as mem
from ..memory.store import InWorkspace
from ..memory.wire import MemoryIn, WorkspaceMemoryIn
from . import store
from .service import _need


async def _scope(db: Database, p: Principal, wid: str, at_least: str = "member") -> InWorkspace:
    async with db.read() as c:
        _need((await store.get_for_member(c, p.id, wid)).role, at_least)
    return InWorkspace(wid, p.id)


async def list_(db: Database, p: Principal, wid: str, **filters) -> dict:
    owner = await _scope(db, p, wid)
    return await mem.list_memories(db, p, owner=owner, **filters)


async def get(db: Database, p: Principal, wid: str, mid: str) -> dict:
    return await mem.get_memory(db, p, mid, owner=await _scope(db, p, wid))


async def history(db: Database, p: Principal, wid: str, mid: str) -> dict:
    return await mem.history(db, p, mid, owner=await _scope(db, p, wid))


async def create(db: Database, settings, p: Principal, wid: str, body: WorkspaceMemoryIn) -> dict:
    owner = await _scope(db, p, wid, "admin")
    return await mem.create_memory(db, settings, p, MemoryIn(**body.model_dump()), owner=owner)


async def update(db: Database, p: Principal, wid: str, mid: str, changes: dict) -> dict:
    owner = await _scope(db, p, wid, "admin")
    return await mem.update_memory(db, p, mid, changes, owner=owner)


async def remove(db: Database, p: Principal, wid: str, mid: str, *, purge: bool) -> None:
    owner = await _scope(db, p, wid, "admin")
    if purge:
        await mem.purge_memory(db, p, mid, owner=owner)
    else:
        await mem.delete_memory(db, p, mid, owner=owner)

"""A fork whose process dies before its copy ran is copied after all, by the queued job, on a real
server (conversations/forks.py). SIGKILL ``chatmem serve`` right after it answered a fork of a
long path (the copy it started beside the request is cut short: one transaction, rolled back),
then the fork is read through a new server with no worker (the HTTP layer copies it), and a
second fork left by a killed server is copied by a worker alone. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess

import httpx
import pytest
from sqlalchemy import func, insert, select, update

from chatmem.conversations import blocks as blk
from chatmem.conversations import dag
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id
from tests.servers import CHATMEM, Server, chatmem_env, create_user

pytestmark = pytest.mark.slow

DEPTH = 6000  # long enough that no copy finishes between the answer and the kill
M = t.messages.c
C = t.conversations.c


async def _long_path(url: str, cid: str) -> None:
    """``DEPTH`` messages as a chain under the conversation, written in bulk."""
    db = Database(url)
    try:
        async with db.read() as c:
            uid = (await c.execute(select(C.user_id).where(C.id == cid))).scalar_one()
        rows, parent, now = [], None, now_ms()
        for d in range(DEPTH):
            text = f"message {d}"
            blocks = [{"kind": "text", "text": text}]
            rows.append(
                dict(
                    id=new_id("msg"),
                    conversation_id=cid,
                    parent_id=parent,
                    role=("user", "assistant")[d % 2],
                    blocks=blocks,
                    search_text=blk.visible_text(blocks),
                    status="complete",
                    created_at=now + d,
                    user_id=uid,
                    depth=d,
                )
            )
            parent = rows[-1]["id"]
        dag.fill_jumps(rows)
        for i in range(0, DEPTH, 1000):
            async with db.write() as c:
                await c.execute(insert(t.messages), rows[i : i + 1000])
        async with db.write() as c:
            await c.execute(
                update(t.conversations)
                .where(C.id == cid)
                .values(active_leaf_id=parent, message_count=DEPTH)
            )
    finally:
        await db.dispose()


async def _state(url: str, cid: str) -> tuple[bool, int]:
    """(still pending, messages stored) of a conversation."""
    db = Database(url)
    try:
        async with db.read() as c:
            pending = (await c.execute(select(C.fork_source_id).where(C.id == cid))).scalar_one()
            q = select(func.count()).select_from(t.messages).where(M.conversation_id == cid)
            return pending is not None, (await c.execute(q)).scalar_one()
    finally:
        await db.dispose()


def _fork_then_kill(url: str, headers: dict, cid: str) -> str:
    """Fork on a fresh server and SIGKILL it as soon as the answer is in: the fork's id."""
    server = Server(url).start()
    try:
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as client:
            r = client.post(f"/api/conversations/{cid}/fork", json={"title": "kept"})
            server.kill_group()
        assert r.status_code == 201, r.text
        assert r.json()["message_count"] == DEPTH
        return r.json()["id"]
    finally:
        server.kill_group()


def test_a_fork_whose_server_died_before_its_copy_is_copied(db_url):
    key = create_user(db_url, "forkcrash@example.com")
    headers = {"Authorization": f"Bearer {key}"}
    server = Server(db_url).start()
    try:
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as client:
            cid = client.post("/api/conversations", json={}).json()["id"]
    finally:
        server.stop()
    asyncio.run(_long_path(db_url, cid))

    # 1. read after a restart with no worker: the HTTP layer copies the fork, answers once
    fork = _fork_then_kill(db_url, headers, cid)
    assert asyncio.run(_state(db_url, fork)) == (True, 0)  # the cut-short copy left nothing
    server = Server(db_url).start()
    try:
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as client:
            r = client.get(f"/api/conversations/{fork}/messages", params={"mode": "tree"})
            assert r.status_code == 200, r.text
            items = r.json()["items"]
            assert len(items) == DEPTH and items[-1]["text"] == f"message {DEPTH - 1}"
    finally:
        server.stop()
    assert asyncio.run(_state(db_url, fork)) == (False, DEPTH)

    # 2. nobody reads it: a worker alone runs the queued copy
    other = _fork_then_kill(db_url, headers, cid)
    assert asyncio.run(_state(db_url, other)) == (True, 0)
    worker = subprocess.Popen(
        [CHATMEM, "worker"],
        env=chatmem_env(db_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            if asyncio.run(_state(db_url, other)) == (False, DEPTH):
                break
            asyncio.run(asyncio.sleep(0.1))
        assert asyncio.run(_state(db_url, other)) == (False, DEPTH)
    finally:
        worker.kill()
        worker.wait(timeout=30)

"""Account deletion on SQLite and PostgreSQL: a user with rows in every table the product
writes (a generated turn with its stream events, log-mode messages, memories and their events,
ratings, a problem report with a screenshot, a share, projects, agents, keys, a web session, an
import and an export with their files, embeddings, jobs, /v1 prefixes, leases, workspaces) deletes
their account; afterwards **every table** of the database — read back from the database itself,
full-text index tables included — holds no value naming them, while another user's rows are
intact. Confirmation, the last-admin rule, the admin route and the count-only audit."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from sqlalchemy import insert, inspect, select, text

from chatmem.auth import service as auth_service
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.feedback import image
from tests.port_support import DATA, client_for, conversations, import_file, port_app, run_jobs


def png(w: int, h: int) -> bytes:
    ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    chunk = (13).to_bytes(4, "big") + b"IHDR" + ihdr + b"\0\0\0\0"
    return image.PNG_SIGNATURE + chunk + b"\0" * 64


async def _table_names(conn) -> list[str]:
    if conn.dialect.name == "sqlite":
        rows = await conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        return [r[0] for r in rows]
    return await conn.run_sync(lambda sync: inspect(sync).get_table_names())


async def scan(app, needles: list[str]) -> dict[str, int]:
    """table → rows holding any of ``needles`` in any column (text, JSON, bytes), every table."""
    hits: dict[str, int] = {}
    async with app.state.runtime.db.read() as conn:
        for name in await _table_names(conn):
            if conn.dialect.name == "postgresql":
                rows = await conn.execute(text(f'SELECT t::text FROM "{name}" t'))
                values = [r[0] for r in rows]
            else:
                rows = await conn.exec_driver_sql(f'SELECT * FROM "{name}"')
                values = [
                    " ".join(
                        v.decode("latin-1") if isinstance(v, (bytes, memoryview)) else str(v)
                        for v in (bytes(x) if isinstance(x, memoryview) else x for x in r)
                    )
                    for r in rows
                ]
            n = sum(1 for v in values if any(s in v for s in needles))
            if n:
                hits[name] = n
    return hits


async def _files(app, user_id: str) -> list[Path]:
    async with app.state.runtime.db.read() as conn:
        out = []
        for table in (t.imports, t.exports):
            q = select(table.c.path).where(table.c.user_id == user_id, table.c.path != "")
            out += [Path(p) for p in (await conn.execute(q)).scalars()]
    return out


#: tables whose rows belong to no user: the server's own leases and workers, and the deletion
#: audit (counts only; an admin actor's id is removed when that admin is deleted)
NOT_PER_USER = {"service_leases", "workers", "account_deletions"}


async def _owned_ids(app, user_id: str) -> list[str]:
    """The ids of the user's conversations, messages and memories: rows that name only those
    (a lease, a job's payload) are the user's too."""
    async with app.state.runtime.db.read() as conn:
        out = []
        for table in (t.conversations, t.messages, t.memories):
            q = select(table.c.id).where(table.c.user_id == user_id)
            out += list((await conn.execute(q)).scalars())
    return out


async def _until(pred, timeout=20.0):
    for _ in range(int(timeout / 0.05)):
        if await pred():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def populate(app, c, marker: str) -> None:
    """Rows of ``c``'s user in every table the product writes."""
    rt = app.state.runtime
    r = await c.post("/api/conversations", json={"title": f"chat {marker}"})
    cid = r.json()["id"]
    r = await c.post(f"/api/conversations/{cid}/messages", json={"content": f"hello {marker}"})
    assert r.status_code == 202, r.text
    aid = r.json()["assistant_message_id"]

    async def finished():
        m = await c.get(f"/api/conversations/{cid}/messages/{aid}")
        return m.json()["status"] != "streaming"

    await _until(finished)
    r = await c.post(
        f"/api/conversations/{cid}/messages",
        json={"content": f"I live in {marker}ville.", "generate": False},
    )
    assert r.status_code == 201, r.text
    mid = r.json()["id"]
    r = await c.post(f"/api/conversations/{cid}/messages/{aid}/feedback", json={"feedback": "like"})
    assert r.status_code == 200, r.text
    r = await c.post(
        "/api/user-feedback",
        data={"description": f"broken {marker}", "conversation_id": cid, "message_id": mid},
        files={"screenshot": ("s.png", png(4, 3), "image/png")},
    )
    assert r.status_code == 201, r.text
    assert (await c.post(f"/api/conversations/{cid}/share")).status_code == 201
    r = await c.post("/api/me/memories", json={"memory_text": f"likes {marker}"})
    mem = r.json()["id"]
    await c.patch(f"/api/me/memories/{mem}", json={"memory_text": f"loves {marker}"})
    r = await c.post("/api/projects", json={"name": f"p {marker}"})
    assert r.status_code == 201, r.text
    r = await c.post("/api/agents", json={"name": f"a {marker}", "handle": f"h{marker}"})
    assert r.status_code == 201, r.text
    r = await c.post(
        "/v1/chat/completions",
        json={"model": "demo", "messages": [{"role": "user", "content": f"v1 {marker}"}]},
    )
    assert r.status_code == 200, r.text
    await import_file(app, c, DATA / "claude.json")
    await import_file(app, c, DATA / "chatgpt.json", dry_run=True)  # its upload is kept
    r = await c.post("/api/exports")
    await run_jobs(app, kinds=("export.archive",))
    await run_jobs(app, kinds=None)  # follow-ups, memory, embeddings, titles
    await c.post(  # queued follow-ups left behind
        f"/api/conversations/{cid}/messages", json={"content": "later", "generate": False}
    )
    now = now_ms()
    async with rt.db.write() as conn:
        await conn.execute(
            insert(t.conversation_generation_leases).values(
                conversation_id=cid,
                branch_key="b",
                principal_id=c.user_id,
                owner_token="y",
                expires_at=now,
            )
        )
        kb = f"kb_{uuid.uuid4().hex[:8]}"
        await conn.execute(
            insert(t.knowledge_bases).values(
                id=kb, user_id=c.user_id, name=marker, created_at=now, updated_at=now
            )
        )
        ws = f"ws_{uuid.uuid4().hex[:8]}"
        await conn.execute(
            insert(t.workspaces).values(
                id=ws, name=marker, owner_id=c.user_id, created_at=now, updated_at=now
            )
        )
        await conn.execute(
            insert(t.workspace_members).values(workspace_id=ws, user_id=c.user_id, created_at=now)
        )
    team = (await c.post("/api/workspaces", json={"name": f"team {marker}"})).json()["id"]
    r = await c.post(f"/api/workspaces/{team}/invites", json={"email": f"{marker.lower()}@x.org"})
    assert r.status_code == 201, r.text


async def test_deleting_an_account_leaves_no_row_anywhere(db_url, tmp_path):
    async with port_app(db_url, tmp_path, embedder="hashing", log_followup_delay_ms=0) as app:
        rt = app.state.runtime
        async with client_for(app) as a, client_for(app) as b:
            await populate(app, a, "Quokka")
            await populate(app, b, "Wombat")
            # a web session and a second key too
            await auth_service.set_password(rt.db, a.user_id, "correct horse battery")
            r = await a.post(
                "/api/auth/login", json={"email": a.email, "password": "correct horse battery"}
            )
            assert r.status_code == 200, r.text
            await auth_service.create_key(rt.db, a.user_id, "second")
            async with rt.db.write() as conn:  # a compaction in flight (the jobs above are done)
                cid = (await conversations(app, a.user_id))[0].id
                await conn.execute(
                    insert(t.conversation_compaction_leases).values(
                        conversation_id=cid, owner_token="x", expires_at=now_ms() + 60_000
                    )
                )
            needles_a = [a.user_id, a.email, "Quokka", *await _owned_ids(app, a.user_id)]
            before = await scan(app, needles_a)
            # every table of the schema held a row of theirs (a new table must be populated
            # above, or named here as holding nobody's rows)
            unfilled = {x.name for x in t.metadata.sorted_tables} - set(before)
            assert unfilled <= NOT_PER_USER, unfilled
            for table in (
                "messages",
                "stream_events",
                "memories",
                "memory_events",
                "embeddings",
                "message_feedback",
                "user_feedback",
                "conversation_shares",
                "projects",
                "agents",
                "api_keys",
                "web_sessions",
                "imports",
                "import_sources",
                "exports",
                "jobs",
                "v1_prefixes",
                "knowledge_bases",
                "workspaces",
                "workspace_members",
                "workspace_invites",
                "conversation_generation_leases",
            ):
                assert before.get(table), (table, before)
            files_a, files_b = await _files(app, a.user_id), await _files(app, b.user_id)
            assert len(files_a) == 2 and all(f.is_file() for f in files_a + files_b)
            assert {f.suffix for f in files_a} == {".zip", ".upload"}

            r = await a.request("DELETE", "/api/account", json={"confirm": "someone@else"})
            assert r.status_code == 422 and r.json()["error"]["code"] == "confirmation_mismatch"
            assert await scan(app, needles_a) == before
            r = await a.request("DELETE", "/api/account", json={"confirm": a.email.upper()})
            assert r.status_code == 200, r.text
            deleted = r.json()["deleted"]
            assert deleted["users"] == 1 and deleted["messages"] >= 10
            assert deleted["stream_events"] > 0 and deleted["jobs"] > 0
            assert deleted["workspace_invites"] == 1

            assert await scan(app, needles_a) == {}
            assert not any(f.exists() for f in files_a)  # the upload and the archive
            assert all(f.is_file() for f in files_b)
            kept = await scan(app, [b.user_id, "Wombat"])
            assert kept.get("messages") and kept.get("memories") and kept.get("embeddings")
            assert (await a.get("/api/me")).status_code == 401


async def test_admin_deletes_a_user_and_the_audit_has_counts_only(db_url, tmp_path):
    async with (
        port_app(db_url, tmp_path) as app,
        client_for(app, admin=True) as admin,
        client_for(app) as u,
    ):
        await import_file(app, u, DATA / "claude.json")
        r = await u.request("DELETE", f"/api/admin/users/{admin.user_id}", json={"confirm": "x"})
        assert r.status_code == 403
        r = await admin.request(
            "DELETE", "/api/admin/users/nope", json={"confirm": "nope@example.com"}
        )
        assert r.status_code == 404
        r = await admin.request(
            "DELETE", f"/api/admin/users/{u.user_id}", json={"confirm": u.email}
        )
        assert r.status_code == 200, r.text
        assert r.json()["deleted"]["messages"] == 9
        assert await scan(app, [u.user_id, u.email]) == {}
        audit = (await admin.get("/api/admin/account-deletions")).json()["items"]
        assert len(audit) == 1 and audit[0]["actor"] == "admin"
        assert audit[0]["actor_id"] == admin.user_id and audit[0]["counts"]["messages"] == 9
        assert (await u.get("/api/admin/account-deletions")).status_code == 401
        # the only admin cannot delete themselves
        r = await admin.request("DELETE", "/api/account", json={"confirm": admin.email})
        assert r.status_code == 409 and r.json()["error"]["code"] == "last_admin"
        async with client_for(app, admin=True) as second:
            r = await second.request(
                "DELETE", f"/api/admin/users/{admin.user_id}", json={"confirm": admin.email}
            )
            assert r.status_code == 200
            # the deleted admin's id went from the audit row they had written
            assert await scan(app, [admin.user_id, admin.email]) == {}

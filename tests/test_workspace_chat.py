"""Shared workspace conversations (issue 16, part 3): several members send in one conversation,
each message records its author, generation leases are per (conversation, branch, principal) so
two members generate at once, and a member's stop stops only their answer (admins stop any)."""

from __future__ import annotations

from contextlib import AsyncExitStack

from sqlalchemy import select

from chatmem.db import schema as t
from tests.test_generation import client_for, running_app, stream


async def _join(owner, user, wid, role="member") -> None:
    r = await owner.post(f"/api/workspaces/{wid}/invites", json={"role": role})
    r = await user.post("/api/workspace-invites/join", json={"token": r.json()["token"]})
    assert r.status_code == 200, r.text


async def _leases(rt, cid) -> set[str]:
    L = t.conversation_generation_leases.c
    async with rt.db.read() as c:
        q = select(L.principal_id).where(L.conversation_id == cid)
        return set((await c.execute(q)).scalars().all())


async def _status(c, cid, mid) -> str:
    return (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()["status"]


async def test_two_members_generate_and_stop_their_own(db_url):
    async with running_app(db_url) as application, AsyncExitStack() as stack:
        rt = application.state.runtime
        a, b, d, n = [await stack.enter_async_context(client_for(application)) for _ in range(4)]
        wid = (await a.post("/api/workspaces", json={"name": "T"})).json()["id"]
        await _join(a, b, wid)
        await _join(a, d, wid, role="admin")
        await _join(a, n, wid)
        cid = (
            await a.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
        ).json()["id"]
        ra = await a.post(
            f"/api/conversations/{cid}/messages", json={"content": "q1", "model": "slow"}
        )
        assert ra.status_code == 202, ra.text
        a1 = ra.json()["assistant_message_id"]
        # b is not blocked by a's running answer: the question follows it
        rb = await b.post(
            f"/api/conversations/{cid}/messages", json={"content": "q2", "model": "slow"}
        )
        assert rb.status_code == 202, rb.text
        b1, q2 = rb.json()["assistant_message_id"], rb.json()["user_message_id"]
        assert await _leases(rt, cid) == {a.user_id, b.user_id}
        # b's own answer still running: b's next question waits for it
        r = await b.post(f"/api/conversations/{cid}/messages", json={"content": "q3"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "parent_streaming"
        # who said what
        msgs = {
            m["id"]: m
            for m in (await n.get(f"/api/conversations/{cid}/messages?mode=tree")).json()["items"]
        }
        assert msgs[ra.json()["user_message_id"]]["author_id"] == a.user_id
        assert msgs[a1]["author_id"] == a.user_id
        assert msgs[q2]["author_id"] == b.user_id and msgs[q2]["parent_id"] == a1
        assert msgs[b1]["author_id"] == b.user_id
        assert {m["user_id"] for m in msgs.values()} == {a.user_id}
        # b may not stop a's answer; b's stop-all stops only b's
        r = await b.post(f"/api/conversations/{cid}/stop", json={"message_id": a1})
        assert r.status_code == 403 and r.json()["error"]["code"] == "workspace_role"
        r = await b.post(f"/api/conversations/{cid}/stop")
        assert r.status_code == 200 and r.json()["stopped"] == [b1]
        assert await _status(a, cid, a1) == "streaming"
        assert await _status(a, cid, b1) == "complete"
        # a plain member's stop-all touches nothing of others; an admin stops any answer
        assert (await n.post(f"/api/conversations/{cid}/stop")).json()["stopped"] == []
        r = await d.post(f"/api/conversations/{cid}/stop", json={"message_id": a1})
        assert r.status_code == 200 and r.json()["stopped"] == [a1]
        assert await _leases(rt, cid) == set()
        application.state.gated.gate.set()
        await stream(a, cid, a1)


async def test_editing_others_messages_and_private_conversations(db_url):
    async with running_app(db_url) as application, AsyncExitStack() as stack:
        a, b, d = [await stack.enter_async_context(client_for(application)) for _ in range(3)]
        wid = (await a.post("/api/workspaces", json={"name": "T"})).json()["id"]
        await _join(a, b, wid)
        await _join(a, d, wid, role="admin")
        cid = (
            await a.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
        ).json()["id"]
        body = {"content": "from a", "generate": False}
        qa = (await a.post(f"/api/conversations/{cid}/messages", json=body)).json()
        body = {"content": "from b", "generate": False}
        qb = (await b.post(f"/api/conversations/{cid}/messages", json=body)).json()
        assert qb["author_id"] == b.user_id and qb["parent_id"] == qa["id"]
        url = f"/api/conversations/{cid}/messages"
        r = await b.patch(f"{url}/{qa['id']}", json={"content": "defaced"})
        assert r.status_code == 403
        assert (await b.delete(f"{url}/{qa['id']}")).status_code == 403
        assert (await b.patch(f"{url}/{qb['id']}", json={"content": "fixed"})).status_code == 200
        assert (await d.patch(f"{url}/{qa['id']}", json={"content": "mod"})).status_code == 200
        assert (await a.delete(f"{url}/{qb['id']}")).status_code == 200
        # a private conversation: another member cannot send in it (404), an admin can
        priv = (await a.post("/api/conversations", json={"workspace_id": wid})).json()["id"]
        body = {"content": "x", "generate": False}
        r = await b.post(f"/api/conversations/{priv}/messages", json=body)
        assert r.status_code == 404
        r = await d.post(f"/api/conversations/{priv}/messages", json=body)
        assert r.status_code == 201 and r.json()["author_id"] == d.user_id

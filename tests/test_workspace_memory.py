"""A workspace's shared memory (issue 16, item 4) on both databases: members read it, owners and
admins manage it with the personal memory's policy and audit trail, strangers get 404; workspace
conversations inject it and never anyone's personal memory, personal conversations never see it;
deleting the workspace deletes it."""

from __future__ import annotations

from sqlalchemy import func, select

from chatmem.db import schema as t

from .tree_api import table_counts


async def _join(owner, user, wid, role="member"):
    r = await owner.client.post(f"/api/workspaces/{wid}/invites", json={"role": role})
    r = await user.client.post("/api/workspace-invites/join", json={"token": r.json()["token"]})
    assert r.status_code == 200, r.text


async def _team(new_user):
    o, d, m, s = [await new_user() for _ in range(4)]
    wid = (await o.client.post("/api/workspaces", json={"name": "Team"})).json()["id"]
    await _join(o, d, wid, "admin")
    await _join(o, m, wid)
    return o, d, m, s, wid


def _ids(r) -> list[str]:
    assert r.status_code == 200, r.text
    return [x["id"] for x in r.json()["items"]]


async def test_members_read_admins_manage_strangers_404(new_user, app):
    o, d, m, s, wid = await _team(new_user)
    base = f"/api/workspaces/{wid}/memories"
    r = await d.client.post(base, json={"memory_text": "Deploys happen on Tuesdays"})
    assert r.status_code == 201, r.text
    mem = r.json()
    assert mem["origin"] == "user" and mem["agent_id"] is None and mem["status"] == "ACTIVE"
    # a personal memory of the admin stays personal, and the workspace's is not in it
    r = await d.client.post("/api/me/memories", json={"memory_text": "My cat is Tom"})
    personal = r.json()["id"]
    assert _ids(await d.client.get("/api/me/memories")) == [personal]
    assert _ids(await m.client.get(base)) == [mem["id"]]
    # the status filter takes what its schema says (as /api/me/memories does): unknown → 422
    assert _ids(await m.client.get(base, params={"status": "ACTIVE,STALE"})) == [mem["id"]]
    r = await m.client.get(base, params={"status": "NOPE"})
    assert r.status_code == 422, r.text
    assert (await m.client.get(f"{base}/{mem['id']}")).json()["memory_text"].startswith("Deploys")
    assert (await m.client.get(f"{base}/{personal}")).status_code == 404
    hist = (await m.client.get(f"{base}/{mem['id']}/history")).json()
    assert [e["event"] for e in hist["events"]] == ["created"] and hist["events"][0][
        "actor"
    ] == d.id
    # another user's personal memory id is not reachable through the workspace, even by its owner
    assert (await d.client.patch(f"{base}/{personal}", json={"importance": 1})).status_code == 404
    before = await table_counts(app)
    # a plain member reads but does not manage; a stranger gets 404 for everything
    for method, url, body in [
        ("POST", base, {"memory_text": "x"}),
        ("PATCH", f"{base}/{mem['id']}", {"memory_text": "defaced"}),
        ("DELETE", f"{base}/{mem['id']}", None),
    ]:
        r = await m.client.request(method, url, json=body)
        assert r.status_code == 403 and r.json()["error"]["code"] == "workspace_role", r.text
    for method, url, body in [
        ("GET", base, None),
        ("POST", base, {"memory_text": "x"}),
        ("GET", f"{base}/{mem['id']}", None),
        ("GET", f"{base}/{mem['id']}/history", None),
        ("PATCH", f"{base}/{mem['id']}", {"memory_text": "defaced"}),
        ("DELETE", f"{base}/{mem['id']}", None),
    ]:
        r = await s.client.request(method, url, json=body)
        assert r.status_code == 404 and "Tuesdays" not in r.text and "Team" not in r.text
    assert (await s.client.get(f"/api/me/memories/{mem['id']}")).status_code == 404
    assert (await d.client.get(f"/api/me/memories/{mem['id']}")).status_code == 404
    assert await table_counts(app) == before
    # the owner edits, disables, deletes; each change is audited
    r = await o.client.patch(f"{base}/{mem['id']}", json={"memory_text": "Deploys on Wednesdays"})
    assert r.status_code == 200 and r.json()["memory_text"] == "Deploys on Wednesdays"
    r = await o.client.patch(f"{base}/{mem['id']}", json={"status": "DISABLED"})
    assert r.json()["status"] == "DISABLED"
    r = await o.client.patch(f"{base}/{mem['id']}", json={"status": "DELETED"})
    assert r.status_code == 422  # the same policy as personal memory
    assert (await o.client.delete(f"{base}/{mem['id']}")).status_code == 204
    hist = (await m.client.get(f"{base}/{mem['id']}/history")).json()
    assert [e["event"] for e in hist["events"]] == ["created", "edited", "disabled", "deleted"]
    assert _ids(await m.client.get(base)) == []
    assert (await o.client.delete(f"{base}/{mem['id']}", params={"purge": True})).status_code == 204
    assert (await m.client.get(f"{base}/{mem['id']}/history")).status_code == 404
    assert _ids(await d.client.get("/api/me/memories")) == [personal]


async def test_slot_policy_is_scoped_by_workspace(new_user, app):
    o, d, m, s, wid = await _team(new_user)
    other = (await o.client.post("/api/workspaces", json={"name": "Other"})).json()["id"]
    base = f"/api/workspaces/{wid}/memories"
    body = {"memory_text": "Standup is at 9", "slot": "standup", "value": "9"}
    first = (await o.client.post(base, json=body)).json()
    # the same slot in the owner's personal memory and in another workspace changes nothing here
    await o.client.post("/api/me/memories", json={**body, "value": "8", "memory_text": "x 8"})
    await o.client.post(
        f"/api/workspaces/{other}/memories", json={**body, "value": "7", "memory_text": "y 7"}
    )
    assert (await m.client.get(f"{base}/{first['id']}")).json()["status"] == "ACTIVE"
    body = {"memory_text": "Standup is at 10", "slot": "standup", "value": "10"}
    second = (await d.client.post(base, json=body)).json()
    assert second["supersedes"] == [first["id"]]
    old = (await m.client.get(f"{base}/{first['id']}")).json()
    assert old["status"] == "STALE" and old["superseded_by"] == [second["id"]]
    assert len(_ids(await o.client.get(f"/api/workspaces/{other}/memories"))) == 1
    assert len(_ids(await o.client.get("/api/me/memories"))) == 1
    # the member's view of the other workspace: not a member → 404
    assert (await m.client.get(f"/api/workspaces/{other}/memories")).status_code == 404


async def _system(client, cid) -> str:
    r = await client.get(f"/api/conversations/{cid}/context", params={"include_messages": True})
    assert r.status_code == 200, r.text
    return "\n".join(str(x["content"]) for x in r.json()["messages"] if x["role"] == "system")


async def test_workspace_conversations_use_the_workspace_memory_only(new_user, app):
    o, d, m, s, wid = await _team(new_user)
    other = (await o.client.post("/api/workspaces", json={"name": "Other"})).json()["id"]
    await o.client.post(f"/api/workspaces/{wid}/memories", json={"memory_text": "Team uses Rust"})
    await o.client.post(f"/api/workspaces/{other}/memories", json={"memory_text": "Other: Go"})
    await m.client.post("/api/me/memories", json={"memory_text": "Member likes tea"})
    cid = (
        await o.client.post("/api/conversations", json={"workspace_id": wid, "is_public": True})
    ).json()["id"]
    body = {"content": "which language?", "generate": False}
    assert (await m.client.post(f"/api/conversations/{cid}/messages", json=body)).status_code == 201
    seen = await _system(m.client, cid)
    assert "Team uses Rust" in seen and "tea" not in seen and "Other: Go" not in seen
    mine = (await m.client.post("/api/conversations", json={})).json()["id"]
    await m.client.post(f"/api/conversations/{mine}/messages", json=body)
    seen = await _system(m.client, mine)
    assert "Member likes tea" in seen and "Rust" not in seen


async def test_deleting_the_workspace_deletes_its_memory(new_user, app):
    o, d, m, s, wid = await _team(new_user)
    r = await o.client.post(f"/api/workspaces/{wid}/memories", json={"memory_text": "Gone soon"})
    mid = r.json()["id"]
    await o.client.post("/api/me/memories", json={"memory_text": "Stays"})
    assert (await o.client.delete(f"/api/workspaces/{wid}")).status_code == 204
    rt = app.state.runtime
    async with rt.db.read() as c:
        q = select(t.memories.c.memory_text).where(t.memories.c.user_id == o.id)
        left = (await c.execute(q)).scalars().all()
        events = (
            await c.execute(select(func.count()).where(t.memory_events.c.memory_id == mid))
        ).scalar()
    assert left == ["Stays"] and events == 0

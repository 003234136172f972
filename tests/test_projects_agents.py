"""Projects and agents CRUD through the HTTP API, on both databases."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from chatmem.db import schema as t


async def test_project_crud_and_name_uniqueness(new_user):
    a = await new_user()
    r = await a.client.post("/api/projects", json={"name": "Research", "instructions": "Be brief."})
    assert r.status_code == 201, r.text
    p = r.json()
    assert p["name"] == "Research" and p["accent"] == "violet" and p["is_public"] is True
    assert "user_id" not in p
    # unique ignoring case and surrounding spaces
    r = await a.client.post("/api/projects", json={"name": "  research "})
    assert r.status_code == 409 and r.json()["error"]["code"] == "duplicate_name"
    r = await a.client.post("/api/projects", json={"name": "Other"})
    other = r.json()
    r = await a.client.patch(f"/api/projects/{other['id']}", json={"name": "RESEARCH"})
    assert r.status_code == 409
    r = await a.client.patch(f"/api/projects/{p['id']}", json={"pinned": True, "emoji": "🔬"})
    assert r.status_code == 200 and r.json()["pinned"] is True and r.json()["emoji"] == "🔬"
    r = await a.client.get("/api/projects")
    assert [x["id"] for x in r.json()["items"]] == [p["id"], other["id"]]
    # another user may use the same name and cannot see ours
    b = await new_user()
    assert (await b.client.post("/api/projects", json={"name": "Research"})).status_code == 201
    assert (await b.client.get(f"/api/projects/{p['id']}")).status_code == 404
    assert (await b.client.patch(f"/api/projects/{p['id']}", json={"name": "x"})).status_code == 404
    assert (await b.client.delete(f"/api/projects/{p['id']}")).status_code == 404
    # a conversation in the project survives the project's deletion, detached
    r = await a.client.post("/api/conversations", json={"project_id": p["id"]})
    cid = r.json()["id"]
    r = await a.client.get(f"/api/conversations?project_id={p['id']}")
    assert [c["id"] for c in r.json()["items"]] == [cid]
    assert (await a.client.delete(f"/api/projects/{p['id']}")).status_code == 204
    r = await a.client.get(f"/api/conversations/{cid}")
    assert r.status_code == 200 and r.json()["project_id"] is None
    # b cannot file a conversation under a's project
    r = await b.client.post("/api/conversations", json={"project_id": other["id"]})
    assert r.status_code == 404


async def test_project_bad_input_writes_nothing(app, new_user):
    a = await new_user()
    for body in (
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 121},
        {"name": "ok", "bogus": 1},
        {"name": 3},
        {"name": "ok", "instructions": "x" * 20001},
    ):
        r = await a.client.post("/api/projects", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["code"] == "validation_error"
    async with app.state.runtime.db.read() as c:
        assert (await c.execute(select(t.projects))).all() == []


PERSONA = {
    "name": "Mika",
    "handle": "mika",
    "headline": "A calm friend",
    "description": "d",
    "story_background": "s",
    "personality_prompt": "warm",
    "tone_prompt": "gentle",
    "guardrails_prompt": "no pressure",
    "opening_message": "Hi, I'm Mika.",
    "default_prompt": "You are Mika.",
    "image_key": "img/mika.png",
}


async def test_agent_crud_fields_and_isolation(new_user):
    a = await new_user()
    r = await a.client.post("/api/agents", json=PERSONA)
    assert r.status_code == 201, r.text
    agent = r.json()
    for k, v in PERSONA.items():
        assert agent[k] == v
    assert agent["status"] == "published" and agent["visibility"] == "private"
    r = await a.client.patch(
        f"/api/agents/{agent['id']}", json={"status": "archived", "headline": "h2"}
    )
    assert r.json()["status"] == "archived" and r.json()["headline"] == "h2"
    for bad in ({"status": "gone"}, {"name": "x" * 121}, {"headline": "x" * 201}, {"extra": 1}):
        r = await a.client.patch(f"/api/agents/{agent['id']}", json=bad)
        assert r.status_code == 422, bad
    b = await new_user()
    assert (await b.client.get(f"/api/agents/{agent['id']}")).status_code == 404
    assert (await b.client.get("/api/agents")).json()["items"] == []
    assert (
        await b.client.post("/api/conversations", json={"agent_id": agent["id"]})
    ).status_code == 404
    assert (await b.client.delete(f"/api/agents/{agent['id']}")).status_code == 404
    assert (await a.client.delete(f"/api/agents/{agent['id']}")).status_code == 204
    assert (await a.client.get(f"/api/agents/{agent['id']}")).status_code == 404


async def test_agent_list_sorted_by_latest_conversation_message(new_user):
    a = await new_user()
    ids = []
    for i in range(3):
        r = await a.client.post("/api/agents", json={"name": f"A{i}", "handle": f"a{i}"})
        ids.append(r.json()["id"])
    # talk to agent 0, then agent 2; agent 1 never
    for aid in (ids[0], ids[2]):
        cid = (await a.client.post("/api/conversations", json={"agent_id": aid})).json()["id"]
        await asyncio.sleep(0.002)
        r = await a.client.post(
            f"/api/conversations/{cid}/messages", json={"content": "hello", "generate": False}
        )
        assert r.status_code == 201
    order = [x["id"] for x in (await a.client.get("/api/agents")).json()["items"]]
    assert order[:2] == [ids[2], ids[0]] and order[2] == ids[1]


async def test_deleting_agent_cascades_to_its_conversations(app, new_user):
    a = await new_user()
    aid = (await a.client.post("/api/agents", json={"name": "A", "handle": "a"})).json()["id"]
    cid = (await a.client.post("/api/conversations", json={"agent_id": aid})).json()["id"]
    await a.client.post(
        f"/api/conversations/{cid}/messages", json={"content": "x", "generate": False}
    )
    assert (await a.client.delete(f"/api/agents/{aid}")).status_code == 204
    assert (await a.client.get(f"/api/conversations/{cid}")).status_code == 404
    async with app.state.runtime.db.read() as c:
        assert (
            await c.execute(select(t.messages).where(t.messages.c.conversation_id == cid))
        ).all() == []


async def test_deleting_agent_with_a_deep_conversation(app, new_user):
    """A chain deeper than SQLite's trigger-recursion limit (1,000) still cascades away."""
    from chatmem.conversations import store

    a = await new_user()
    aid = (await a.client.post("/api/agents", json={"name": "Deep", "handle": "deep"})).json()["id"]
    cid = (await a.client.post("/api/conversations", json={"agent_id": aid})).json()["id"]
    db = app.state.runtime.db
    async with db.write() as c:
        conv = await store.get_conversation(c, a.id, cid)
        parent = None
        for i in range(1100):
            row = await store.insert_message(
                c,
                conv,
                parent_id=parent,
                role="user",
                blocks=[{"kind": "text", "text": str(i)}],
                user_id=a.id,
            )
            parent = row.id
    assert (await a.client.delete(f"/api/agents/{aid}")).status_code == 204
    async with db.read() as c:
        assert (
            await c.execute(select(t.messages).where(t.messages.c.conversation_id == cid))
        ).all() == []

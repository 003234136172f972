"""Conversations through the HTTP API: create, list (order, cursor, filters), get, patch, delete.

Deletion is checked against the ON DELETE rules the seed defines by inserting rows straight into
the seed tables with SQLAlchemy Core (shares, leases, feedback, stream events, memories).
"""

from __future__ import annotations

from sqlalchemy import delete, insert

from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id

from .tree_api import conv, count, new_conv, path, rows, say, tick

C = t.conversations.c
M = t.messages.c


async def _insert(app, table, **values):
    async with app.state.runtime.db.write() as c:
        await c.execute(insert(table).values(**values))


async def _project(app, user_id: str, name: str, **kw) -> str:
    pid = new_id("p")
    now = now_ms()
    await _insert(
        app, t.projects, id=pid, user_id=user_id, name=name, created_at=now, updated_at=now, **kw
    )
    return pid


async def _agent(app, user_id: str, name: str) -> str:
    aid = new_id("ag")
    now = now_ms()
    await _insert(
        app,
        t.agents,
        id=aid,
        user_id=user_id,
        name=name,
        handle=name.lower(),
        created_at=now,
        updated_at=now,
    )
    return aid


async def test_create_get_patch(new_user, app):
    a = await new_user()
    pid = await _project(app, a.id, "Work")
    r = await a.client.post(
        "/api/conversations",
        json={"title": "hello", "model": "demo", "pinned": True, "project_id": pid},
    )
    assert r.status_code == 201, r.text
    c = r.json()
    assert c["title"] == "hello" and c["model_id"] == "demo" and c["pinned"] is True
    assert c["project_id"] == pid and c["starred"] is False and c["archived"] is False
    for key in (
        "message_count",
        "summary_blocks",
        "active_leaf_id",
        "last_message_at",
        "kb_ids",
        "rag_mode",
        "workspace_id",
        "agent_id",
        "summary",
        "created_at",
    ):
        assert key in c
    assert "provider_state" not in c and "user_id" not in c
    assert c["summary_blocks"] == [] and c["message_count"] == 0
    assert await conv(a.client, c["id"]) == c
    default = await new_conv(a.client)
    # the default title follows the user's language (English without one; see test_accounts)
    assert default["title"] == "New chat" and default["pinned"] is False
    await tick()
    r = await a.client.patch(
        f"/api/conversations/{c['id']}",
        json={
            "title": "renamed",
            "starred": True,
            "archived": True,
            "pinned": False,
            "model": "fast",
            "project_id": None,
        },
    )
    assert r.status_code == 200, r.text
    p = r.json()
    assert (
        p["title"],
        p["starred"],
        p["archived"],
        p["pinned"],
        p["model_id"],
        p["project_id"],
    ) == ("renamed", True, True, False, "fast", None)
    assert p["updated_at"] > c["updated_at"] and p["created_at"] == c["created_at"]
    assert await conv(a.client, c["id"]) == p
    # a partial patch leaves the rest alone
    r = await a.client.patch(f"/api/conversations/{c['id']}", json={"project_id": pid})
    assert r.json()["project_id"] == pid and r.json()["title"] == "renamed"
    assert r.json()["starred"] is True


async def test_an_unknown_model_is_refused_on_create_and_patch(new_user, app):
    """The conversation's model is the one its turns run on: a model the catalogue does not have
    is a 422 ``unknown_model`` when it is set, not on every turn afterwards."""
    a = await new_user()
    before = await count(app, t.conversations)
    r = await a.client.post("/api/conversations", json={"model": "gpt-nonexistent"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "unknown_model"
    assert await count(app, t.conversations) == before
    c = await new_conv(a.client)
    r = await a.client.patch(f"/api/conversations/{c['id']}", json={"model": "gpt-nonexistent"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "unknown_model"
    assert (await conv(a.client, c["id"]))["model_id"] == ""
    r = await a.client.post(f"/api/conversations/{c['id']}/messages", json={"content": "hi"})
    assert r.status_code == 202, r.text


async def test_titles_and_names_are_stripped_and_never_blank(new_user):
    """A title of spaces names nothing: on create it reads as no title (the default one), a rename
    to it is a 422 that changes nothing, surrounding spaces go; the same for the user's name."""
    a = await new_user()
    c = await new_conv(a.client, title="  Trip plans \n")
    assert c["title"] == "Trip plans"
    blank = await new_conv(a.client, title=" \t ")
    assert blank["title"].strip() and blank["title"] == (await new_conv(a.client))["title"]
    r = await a.client.patch(f"/api/conversations/{c['id']}", json={"title": "   "})
    assert r.status_code == 422, r.text
    assert (await conv(a.client, c["id"]))["title"] == "Trip plans"
    r = await a.client.patch(f"/api/conversations/{c['id']}", json={"title": " Trips "})
    assert r.json()["title"] == "Trips"
    r = await a.client.patch("/api/me", json={"name": "  "})
    assert r.status_code == 422, r.text
    r = await a.client.patch("/api/me", json={"name": " Ann "})
    assert r.status_code == 200 and r.json()["name"] == "Ann", r.text


async def test_list_pinned_first_then_recent_with_cursor(new_user):
    a = await new_user()
    made = []
    for i in range(7):
        made.append(await new_conv(a.client, title=f"c{i}"))
        await tick()
    ids = [c["id"] for c in made]
    # pin c1 and c4; bump c0 by a message; c6 stays newest of the unpinned otherwise
    for i in (1, 4):
        await a.client.patch(f"/api/conversations/{ids[i]}", json={"pinned": True})
        await tick()
    await say(a.client, ids[0], "bump")
    expected = [ids[4], ids[1], ids[0], ids[6], ids[5], ids[3], ids[2]]
    r = await a.client.get("/api/conversations")
    assert [c["id"] for c in r.json()["items"]] == expected and r.json()["next_cursor"] is None
    for size in (1, 2, 3, 7):
        seen, cursor = [], None
        while True:
            params = {"limit": size} | ({"cursor": cursor} if cursor else {})
            r = await a.client.get("/api/conversations", params=params)
            assert r.status_code == 200, r.text
            page = r.json()
            assert len(page["items"]) <= size
            seen += [c["id"] for c in page["items"]]
            cursor = page["next_cursor"]
            if not cursor:
                break
        assert seen == expected, size  # no duplicates, no skips, same order


async def test_list_cursor_with_equal_timestamps(new_user, app):
    """Rows sharing pinned and updated_at are still paged without loss (id breaks ties)."""
    a = await new_user()
    ids = [(await new_conv(a.client, title=f"s{i}"))["id"] for i in range(5)]
    async with app.state.runtime.db.write() as c:
        from sqlalchemy import update

        await c.execute(update(t.conversations).where(C.id.in_(ids)).values(updated_at=12345))
    seen, cursor = [], None
    while True:
        r = await a.client.get(
            "/api/conversations", params={"limit": 2} | ({"cursor": cursor} if cursor else {})
        )
        seen += [c["id"] for c in r.json()["items"]]
        cursor = r.json()["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == 5


async def test_list_filters(new_user, app):
    a = await new_user()
    pid = await _project(app, a.id, "P")
    aid = await _agent(app, a.id, "Ann")
    plain = await new_conv(a.client, title="plain")
    starred = await new_conv(a.client, title="starred", starred=True)
    in_project = await new_conv(a.client, title="proj", project_id=pid)
    with_agent = await new_conv(a.client, title="agent", agent_id=aid)
    archived = await new_conv(a.client, title="arch")
    await a.client.patch(f"/api/conversations/{archived['id']}", json={"archived": True})
    # hidden: inline threads and workspace conversations are not in the personal list
    await _insert(
        app,
        t.conversations,
        id=new_id("c"),
        user_id=a.id,
        inline_source_conv=plain["id"],
        created_at=now_ms(),
        updated_at=now_ms(),
    )
    await _insert(
        app,
        t.conversations,
        id=new_id("c"),
        user_id=a.id,
        workspace_id="w1",
        created_at=now_ms(),
        updated_at=now_ms(),
    )

    async def ids(**params):
        r = await a.client.get("/api/conversations", params=params)
        assert r.status_code == 200, r.text
        return {c["id"] for c in r.json()["items"]}

    assert await ids() == {plain["id"], starred["id"], in_project["id"], with_agent["id"]}
    assert await ids(archived="true") == {archived["id"]}
    assert await ids(starred="true") == {starred["id"]}
    assert await ids(starred="false") == {plain["id"], in_project["id"], with_agent["id"]}
    assert await ids(project_id=pid) == {in_project["id"]}
    assert await ids(agent_id=aid) == {with_agent["id"]}
    assert await ids(project_id=pid, starred="true") == set()
    b = await new_user()
    r = await b.client.get("/api/conversations")
    assert r.json()["items"] == []


async def _seed_dependents(app, a, cid: str, mid: str) -> dict:
    """One row of every table that hangs off a conversation or a message."""
    now = now_ms()
    ids = {k: new_id(k) for k in ("share", "mf", "uf", "mem")}
    await _insert(
        app,
        t.conversation_shares,
        id=ids["share"],
        conversation_id=cid,
        user_id=a.id,
        created_at=now,
    )
    await _insert(
        app,
        t.conversation_compaction_leases,
        conversation_id=cid,
        owner_token="o",
        expires_at=now + 60_000,
    )
    await _insert(
        app,
        t.conversation_generation_leases,
        conversation_id=cid,
        branch_key=mid,
        principal_id=a.id,
        owner_token="o",
        expires_at=now + 60_000,
    )
    await _insert(
        app,
        t.message_feedback,
        id=ids["mf"],
        message_id=mid,
        conversation_id=cid,
        user_id=a.id,
        rating="like",
        created_at=now,
        updated_at=now,
    )
    await _insert(
        app,
        t.user_feedback,
        id=ids["uf"],
        user_id=a.id,
        message_id=mid,
        conversation_id=cid,
        conversation_title="t",
        description="broken",
        created_at=now,
    )
    await _insert(
        app,
        t.stream_events,
        message_id=mid,
        seq=1,
        type="text_delta",
        data={"t": "x"},
        created_at=now,
    )
    await _insert(
        app,
        t.memories,
        id=ids["mem"],
        user_id=a.id,
        memory_text="likes tea",
        source_message_id=mid,
        created_at=now,
        updated_at=now,
    )
    return ids


async def test_delete_cascades_as_the_seed_says(new_user, app):
    a = await new_user()
    keep = await new_conv(a.client, title="keep")
    kq = await say(a.client, keep["id"], "kept")
    c = await new_conv(a.client, title="doomed")
    q = await say(a.client, c["id"], "q")
    ans = await say(a.client, c["id"], "a", role="assistant")
    ids = await _seed_dependents(app, a, c["id"], ans["id"])
    kept_ids = await _seed_dependents(app, a, keep["id"], kq["id"])
    inline_id = new_id("c")
    await _insert(
        app,
        t.conversations,
        id=inline_id,
        user_id=a.id,
        inline_source_conv=c["id"],
        inline_parent_id=q["id"],
        created_at=now_ms(),
        updated_at=now_ms(),
    )
    r = await a.client.delete(f"/api/conversations/{c['id']}")
    assert r.status_code == 204 and r.content == b""
    assert (await a.client.get(f"/api/conversations/{c['id']}")).status_code == 404
    assert await count(app, t.conversations, C.id.in_([c["id"], inline_id])) == 0
    assert await count(app, t.messages, M.conversation_id == c["id"]) == 0
    for table, col in (
        (t.conversation_shares, "conversation_id"),
        (t.conversation_compaction_leases, "conversation_id"),
        (t.conversation_generation_leases, "conversation_id"),
        (t.message_feedback, "conversation_id"),
    ):
        assert await count(app, table, table.c[col] == c["id"]) == 0, table.name
    assert await count(app, t.stream_events, t.stream_events.c.message_id == ans["id"]) == 0
    # SET NULL: the problem report and the memory outlive the conversation
    [uf] = await rows(app, t.user_feedback, t.user_feedback.c.id == ids["uf"])
    assert uf.message_id is None and uf.conversation_id is None and uf.conversation_title == "t"
    [mem] = await rows(app, t.memories, t.memories.c.id == ids["mem"])
    assert mem.source_message_id is None
    # the other conversation and its rows are untouched
    assert [m["text"] for m in await path(a.client, keep["id"])] == ["kept"]
    assert (
        await count(app, t.conversation_shares, t.conversation_shares.c.id == kept_ids["share"])
        == 1
    )
    assert await count(app, t.message_feedback, t.message_feedback.c.id == kept_ids["mf"]) == 1
    assert await count(app, t.stream_events, t.stream_events.c.message_id == kq["id"]) == 1
    [uf] = await rows(app, t.user_feedback, t.user_feedback.c.id == kept_ids["uf"])
    assert uf.message_id == kq["id"]


async def test_delete_round_cascades_message_rows(new_user, app):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q = await say(a.client, cid, "q")
    ans = await say(a.client, cid, "a", role="assistant")
    ids = await _seed_dependents(app, a, cid, ans["id"])
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{q['id']}")
    assert r.status_code == 200
    assert await count(app, t.message_feedback, t.message_feedback.c.id == ids["mf"]) == 0
    assert await count(app, t.stream_events, t.stream_events.c.message_id == ans["id"]) == 0
    [uf] = await rows(app, t.user_feedback, t.user_feedback.c.id == ids["uf"])
    assert uf.message_id is None and uf.conversation_id == cid
    [mem] = await rows(app, t.memories, t.memories.c.id == ids["mem"])
    assert mem.source_message_id is None
    assert await count(app, t.conversation_shares, t.conversation_shares.c.id == ids["share"]) == 1


async def test_delete_deep_conversation(new_user, app):
    """A 1,500-deep chain: SQLite runs each parent_id cascade level as a nested trigger."""
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    parent, values = None, []
    for i in range(1500):
        mid = new_id("msg")
        values.append(
            dict(
                id=mid,
                conversation_id=cid,
                parent_id=parent,
                depth=i,
                user_id=a.id,
                role="user" if i % 2 == 0 else "assistant",
                created_at=1000 + i,
                blocks=[{"kind": "text", "text": str(i)}],
                search_text=str(i),
            )
        )
        parent = mid
    async with app.state.runtime.db.write() as c:
        await c.execute(insert(t.messages), values)
    r = await a.client.delete(f"/api/conversations/{cid}")
    assert r.status_code == 204, r.text
    assert await count(app, t.messages, M.conversation_id == cid) == 0


async def test_set_null_rules_for_projects_and_knowledge_bases(new_user, app):
    a = await new_user()
    kb = new_id("kb")
    await _insert(
        app,
        t.knowledge_bases,
        id=kb,
        user_id=a.id,
        name="kb",
        created_at=now_ms(),
        updated_at=now_ms(),
    )
    pid = await _project(app, a.id, "with kb", kb_id=kb)
    c = await new_conv(a.client, project_id=pid)
    async with app.state.runtime.db.write() as conn:
        await conn.execute(delete(t.knowledge_bases).where(t.knowledge_bases.c.id == kb))
    [p] = await rows(app, t.projects, t.projects.c.id == pid)
    assert p.kb_id is None
    async with app.state.runtime.db.write() as conn:
        await conn.execute(delete(t.projects).where(t.projects.c.id == pid))
    after = await conv(a.client, c["id"])
    assert after["project_id"] is None and after["title"] == c["title"]

"""/api/me/memories on SQLite and PostgreSQL: add, list/filter/page, edit, enable/disable, the 422
on forbidden transitions, soft delete, purge, history, source messages and ownership."""

from __future__ import annotations

from sqlalchemy import func, select

from chatmem.db import schema as t
from chatmem.memory.hooks import run_extraction


async def _post(u, **body):
    r = await u.client.post("/api/me/memories", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def _events(app, mid: str) -> list[str]:
    async with app.state.runtime.db.read() as c:
        rows = (
            await c.execute(
                select(t.memory_events.c.event)
                .where(t.memory_events.c.memory_id == mid)
                .order_by(t.memory_events.c.created_at, t.memory_events.c.id)
            )
        ).all()
    return [r.event for r in rows]


async def _count(app, table, **where) -> int:
    async with app.state.runtime.db.read() as c:
        q = select(func.count()).select_from(table)
        for k, v in where.items():
            q = q.where(table.c[k] == v)
        return (await c.execute(q)).scalar()


async def test_add_by_hand_is_user_origin_high_confidence_with_event(app, new_user):
    a = await new_user()
    m = await _post(a, memory_text="Prefers metric units", memory_type="preference")
    assert m["origin"] == "user" and m["confidence"] >= 0.95 and m["status"] == "ACTIVE"
    assert m["source_messages"] == [] and m["agent_id"] is None
    for k in (
        "memory_text",
        "memory_type",
        "slot",
        "value",
        "status",
        "confidence",
        "source_message_ids",
        "supersedes",
        "superseded_by",
        "valid_from",
        "valid_until",
        "importance",
        "created_at",
        "updated_at",
    ):
        assert k in m
    assert await _events(app, m["id"]) == ["created"]


async def test_list_filters_and_cursor_pagination(app, new_user):
    a = await new_user()
    ids = [
        (
            await _post(
                a,
                memory_text=f"Fact number {i}",
                memory_type="identity" if i % 2 else "goal",
                slot=f"s{i}",
                value=str(i),
            )
        )["id"]
        for i in range(7)
    ]
    seen, cursor = [], None
    while True:
        r = await a.client.get(
            "/api/me/memories", params={"limit": 3, **({"cursor": cursor} if cursor else {})}
        )
        assert r.status_code == 200
        page = r.json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids))  # newest update first, nothing skipped or repeated
    r = await a.client.get("/api/me/memories", params={"type": "goal"})
    assert {m["memory_type"] for m in r.json()["items"]} == {"goal"} and len(r.json()["items"]) == 4
    r = await a.client.get("/api/me/memories", params={"slot": "s3"})
    assert [m["value"] for m in r.json()["items"]] == ["3"]
    r = await a.client.get("/api/me/memories", params={"q": "NUMBER 5"})
    assert [m["value"] for m in r.json()["items"]] == ["5"]
    r = await a.client.get(
        "/api/me/memories", params={"agent_id": "none", "status": "ACTIVE,DISABLED"}
    )
    assert len(r.json()["items"]) == 7
    for bad in ("BOGUS", "", "ACTIVE,", "ACTIVE, DISABLED"):  # the schema's pattern says so
        r = await a.client.get("/api/me/memories", params={"status": bad})
        assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error", bad
    r = await a.client.get("/api/me/memories", params={"cursor": "garbage!"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_cursor"


async def test_hand_added_value_supersedes_same_slot(app, new_user):
    a = await new_user()
    old = await _post(a, memory_text="Lives in Paris", slot="home_location", value="Paris")
    new = await _post(a, memory_text="Lives in Berlin", slot="home_location", value="Berlin")
    r = await a.client.get(f"/api/me/memories/{old['id']}")
    got = r.json()
    assert got["status"] == "STALE" and got["superseded_by"] == [new["id"]]
    assert new["supersedes"] == [old["id"]] and got["valid_until"] is not None
    assert await _events(app, old["id"]) == ["created", "superseded"]


async def test_patch_fields_and_status_round_trip(app, new_user):
    a = await new_user()
    m = await _post(a, memory_text="Likes jazz", memory_type="preference")
    r = await a.client.patch(
        f"/api/me/memories/{m['id']}",
        json={"memory_text": "Likes cool jazz", "importance": 5, "memory_type": "habit"},
    )
    assert r.status_code == 200, r.text
    assert (r.json()["memory_text"], r.json()["importance"], r.json()["memory_type"]) == (
        "Likes cool jazz",
        5,
        "habit",
    )
    r = await a.client.patch(f"/api/me/memories/{m['id']}", json={"status": "DISABLED"})
    assert r.json()["status"] == "DISABLED"
    r = await a.client.patch(f"/api/me/memories/{m['id']}", json={"status": "ACTIVE"})
    assert r.json()["status"] == "ACTIVE"
    assert await _events(app, m["id"]) == ["created", "edited", "disabled", "enabled"]


async def test_forbidden_status_transitions_are_422_and_write_nothing(app, new_user):
    a = await new_user()
    old = await _post(a, memory_text="Lives in Paris", slot="home_location", value="Paris")
    await _post(a, memory_text="Lives in Berlin", slot="home_location", value="Berlin")
    m = await _post(a, memory_text="Likes tea")
    for mid, body in (
        (m["id"], {"status": "STALE"}),
        (m["id"], {"status": "QUERY_DEPENDENT"}),
        (m["id"], {"status": "DELETED"}),
        (old["id"], {"status": "ACTIVE"}),
        (m["id"], {"status": "UNKNOWN_CURRENT", "memory_text": "changed"}),
    ):
        before = await _count(app, t.memory_events, memory_id=mid)
        r = await a.client.patch(f"/api/me/memories/{mid}", json=body)
        assert r.status_code == 422, (body, r.text)
        err = r.json()["error"]
        if body["status"] not in ("ACTIVE", "DISABLED"):  # the schema's enum: a validation error
            assert err["code"] == "validation_error", err
        else:
            assert (
                err["code"] == "invalid_status_transition"
                and err["message"]
                and "from" in err["details"]
            )
        assert await _count(app, t.memory_events, memory_id=mid) == before
    r = await a.client.get(f"/api/me/memories/{m['id']}")
    assert r.json()["memory_text"] == "Likes tea" and r.json()["status"] == "ACTIVE"


async def test_bad_input_is_an_error_envelope_and_writes_nothing(app, new_user):
    a = await new_user()
    for body in (
        {"memory_text": ""},
        {"memory_text": "x", "importance": 9},
        {"memory_text": "x", "bogus": 1},
        {"memory_text": "x" * 2001},
        {"memory_text": "x", "status": "STALE"},
        {"memory_text": "x", "valid_from": 10, "valid_until": 5},
    ):
        r = await a.client.post("/api/me/memories", json=body)
        assert r.status_code == 422, body
        assert set(r.json()["error"]) == {"code", "message", "details"}
    r = await a.client.post("/api/me/memories", json={"memory_text": "x", "agent_id": "agt_nope"})
    assert r.status_code == 404
    assert await _count(app, t.memories, user_id=a.id) == 0
    mid = (await a.client.post("/api/me/memories", json={"memory_text": "x"})).json()["id"]
    for path, method in (("/api/me/memories", "POST"), (f"/api/me/memories/{mid}", "PATCH")):
        body = {"memory_text": "x", "valid_from": 10, "valid_until": 5}
        r = await a.client.request(method, path, json=body)
        assert (r.status_code, r.json()["error"]["code"]) == (422, "invalid_validity"), method


async def test_a_blank_memory_text_is_refused_on_add_as_on_edit(app, new_user):
    """The text is stripped before it is stored: a whitespace-only text would be an empty memory
    (PATCH already refuses it), in the user's memory and in a workspace's alike."""
    a = await new_user()
    for text in ("   ", "\n\t ", "\u3000"):
        r = await a.client.post("/api/me/memories", json={"memory_text": text})
        assert r.status_code == 422, (text, r.text)
        assert r.json()["error"]["code"] == "validation_error"
    r = await a.client.post("/api/workspaces", json={"name": "Team"})
    assert r.status_code == 201, r.text
    wid = r.json()["id"]
    r = await a.client.post(f"/api/workspaces/{wid}/memories", json={"memory_text": "  "})
    assert r.status_code == 422, r.text
    assert await _count(app, t.memories, user_id=a.id) == 0
    async with app.state.runtime.db.read() as c:
        assert (await c.execute(select(func.count()).select_from(t.memories))).scalar() == 0


async def test_reenabling_a_slot_value_supersedes_the_current_one(app, new_user):
    a = await new_user()
    paris = await _post(a, memory_text="Lives in Paris", slot="home_location", value="Paris")
    await a.client.patch(f"/api/me/memories/{paris['id']}", json={"status": "DISABLED"})
    berlin = await _post(a, memory_text="Lives in Berlin", slot="home_location", value="Berlin")
    assert berlin["supersedes"] == []  # a disabled row is not a rival
    r = await a.client.patch(f"/api/me/memories/{paris['id']}", json={"status": "ACTIVE"})
    assert r.json()["status"] == "ACTIVE" and r.json()["supersedes"] == [berlin["id"]]
    b = (await a.client.get(f"/api/me/memories/{berlin['id']}")).json()
    assert b["status"] == "STALE" and b["superseded_by"] == [paris["id"]]
    r = await a.client.get("/api/me/memories", params={"slot": "home_location", "status": "ACTIVE"})
    assert [m["id"] for m in r.json()["items"]] == [paris["id"]]


async def test_another_users_memory_is_404_everywhere(app, new_user):
    a, b = await new_user(), await new_user()
    m = await _post(a, memory_text="Secret fact")
    for method, path, body in (
        ("GET", "", None),
        ("PATCH", "", {"status": "DISABLED"}),
        ("DELETE", "", None),
        ("DELETE", "?purge=true", None),
        ("GET", "/history", None),
    ):
        r = await b.client.request(method, f"/api/me/memories/{m['id']}{path}", json=body)
        assert r.status_code == 404, (method, path)
        assert r.json()["error"]["code"] == "not_found"
    assert (await b.client.get("/api/me/memories")).json()["items"] == []
    assert (await a.client.get(f"/api/me/memories/{m['id']}")).json()["status"] == "ACTIVE"


async def test_soft_delete_then_purge_removes_memory_and_audit_rows(app, new_user):
    a = await new_user()
    old = await _post(a, memory_text="Lives in Paris", slot="home_location", value="Paris")
    new = await _post(a, memory_text="Lives in Berlin", slot="home_location", value="Berlin")
    r = await a.client.delete(f"/api/me/memories/{new['id']}")
    assert r.status_code == 204
    assert new["id"] not in [
        m["id"] for m in (await a.client.get("/api/me/memories")).json()["items"]
    ]
    r = await a.client.get("/api/me/memories", params={"status": "DELETED"})
    assert [m["id"] for m in r.json()["items"]] == [new["id"]]
    assert (
        await a.client.patch(f"/api/me/memories/{new['id']}", json={"importance": 2})
    ).status_code == 404
    assert await _events(app, new["id"]) == ["created", "deleted"]
    r = await a.client.delete(f"/api/me/memories/{new['id']}", params={"purge": "true"})
    assert r.status_code == 204
    assert await _count(app, t.memories, id=new["id"]) == 0
    assert await _count(app, t.memory_events, memory_id=new["id"]) == 0
    o = (await a.client.get(f"/api/me/memories/{old['id']}")).json()
    assert o["superseded_by"] == [] and o["status"] == "DISABLED"  # no dangling link
    assert (await _events(app, old["id"]))[-1] == "unlinked"


async def test_history_has_events_and_supersession_chain(app, new_user):
    a = await new_user()
    ids = [
        (await _post(a, memory_text=f"Lives in {c}", slot="home_location", value=c))["id"]
        for c in ("Paris", "Berlin", "Oslo")
    ]
    r = await a.client.get(f"/api/me/memories/{ids[1]}/history")
    assert r.status_code == 200
    h = r.json()
    assert h["memory"]["id"] == ids[1]
    assert [e["event"] for e in h["events"]] == ["created", "superseded"]
    assert (
        h["events"][1]["before"]["status"] == "ACTIVE"
        and h["events"][1]["after"]["status"] == "STALE"
    )
    assert [c["value"] for c in h["chain"]] == ["Paris", "Berlin", "Oslo"]
    assert [c["status"] for c in h["chain"]] == ["STALE", "STALE", "ACTIVE"]


async def test_source_messages_come_with_extracted_memories(app, new_user):
    a = await new_user()
    cid = (await a.client.post("/api/conversations", json={})).json()["id"]
    r = await a.client.post(
        f"/api/conversations/{cid}/messages",
        json={"content": "My name is Alice and I live in Paris.", "generate": False},
    )
    mid = r.json()["id"]
    await run_extraction(app.state.runtime, cid, a.id)
    items = (await a.client.get("/api/me/memories")).json()["items"]
    assert {(m["slot"], m["value"]) for m in items} == {
        ("name", "Alice"),
        ("home_location", "Paris"),
    }
    for m in items:
        assert m["source_message_id"] == mid and m["source_message_ids"] == [mid]
        [s] = m["source_messages"]
        assert s == {
            "id": mid,
            "role": "user",
            "excerpt": "My name is Alice and I live in Paris.",
            "created_at": s["created_at"],
            "conversation_id": cid,
        }
    # the source goes away with its conversation; the memory stays, without a visible source
    await a.client.delete(f"/api/conversations/{cid}")
    items = (await a.client.get("/api/me/memories")).json()["items"]
    assert len(items) == 2 and all(m["source_messages"] == [] for m in items)


async def test_adding_is_refused_when_memory_is_off(app, new_user):
    a = await new_user()
    r = await a.client.patch("/api/me", json={"memory_enabled": False})
    assert r.status_code == 200, r.text
    r = await a.client.post("/api/me/memories", json={"memory_text": "x"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "memory_disabled"


async def test_conflict_with_a_user_memory_waits_for_the_user_to_resolve(app, new_user):
    a = await new_user()
    oslo = await _post(a, memory_text="Lives in Oslo", slot="home_location", value="Oslo")
    cid = (await a.client.post("/api/conversations", json={})).json()["id"]
    await a.client.post(
        f"/api/conversations/{cid}/messages", json={"content": "I live in Rome.", "generate": False}
    )
    await run_extraction(app.state.runtime, cid, a.id)
    items = (await a.client.get("/api/me/memories", params={"slot": "home_location"})).json()[
        "items"
    ]
    by_value = {m["value"]: m for m in items}
    assert by_value["Oslo"]["status"] == "ACTIVE"  # the user's own memory is not overridden
    rome = by_value["Rome"]
    assert rome["status"] == "UNKNOWN_CURRENT" and rome["origin"] == "extracted"
    r = await a.client.patch(f"/api/me/memories/{rome['id']}", json={"status": "ACTIVE"})
    assert r.status_code == 200 and r.json()["status"] == "ACTIVE"
    assert r.json()["supersedes"] == [oslo["id"]]
    o = (await a.client.get(f"/api/me/memories/{oslo['id']}")).json()
    assert o["status"] == "STALE" and o["superseded_by"] == [rome["id"]]
    assert (await _events(app, rome["id"])) == ["conflict", "resolved"]

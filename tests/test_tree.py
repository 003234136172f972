"""The conversation tree through the HTTP API (log mode), on SQLite and PostgreSQL.

Append under a parent (default: the active leaf), the active path a page at a time, ``mode=tree``,
switching branch, edit in place, deleting a round, fork, counters and the search projection.
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import update

from chatmem.auth.models import Principal
from chatmem.conversations import fork_store, forks, service, store
from chatmem.conversations.wire import ForkIn
from chatmem.db import schema as t
from chatmem.db.ids import id_block, new_id

from .tree_api import conv, count, new_conv, path, rows, say, texts, tick

M = t.messages.c


async def test_append_defaults_to_active_leaf_and_moves_it(new_user, app):
    a = await new_user()
    c = await new_conv(a.client, title="t")
    assert c["message_count"] == 0 and c["active_leaf_id"] is None and c["last_message_at"] is None
    q1 = await say(a.client, c["id"], "q1")
    assert q1["parent_id"] is None and q1["depth"] == 0 and q1["role"] == "user"
    a1 = await say(a.client, c["id"], "a1", role="assistant")
    assert a1["parent_id"] == q1["id"] and a1["depth"] == 1
    after = await conv(a.client, c["id"])
    assert after["active_leaf_id"] == a1["id"]
    assert after["message_count"] == 2
    assert after["last_message_at"] == a1["created_at"]
    assert after["updated_at"] >= a1["created_at"] >= c["updated_at"]
    # an explicit older parent makes a branch, and the leaf follows the new message
    r = await a.client.post(
        f"/api/conversations/{c['id']}/messages",
        json={"content": "x", "generate": False, "parent_id": None},
    )
    assert r.json()["parent_id"] == a1["id"]  # a null parent without branch: the active leaf
    await a.client.delete(f"/api/conversations/{c['id']}/messages/{r.json()['id']}")
    q1b = await say(a.client, c["id"], "q1b", parent=None)  # branch with no parent: a new root
    assert q1b["parent_id"] is None and q1b["depth"] == 0
    assert q1b["sibling_ids"] == [q1["id"], q1b["id"]] and q1b["branch_index"] == 1
    assert (await conv(a.client, c["id"]))["active_leaf_id"] == q1b["id"]
    alt = await say(a.client, c["id"], "a1-alt", role="assistant", parent=q1["id"])
    assert alt["parent_id"] == q1["id"] and alt["depth"] == 1
    assert alt["branch_index"] == 1 and alt["branch_count"] == 2
    assert alt["sibling_ids"] == [a1["id"], alt["id"]]
    assert (await conv(a.client, c["id"]))["active_leaf_id"] == alt["id"]
    assert texts(await path(a.client, c["id"])) == ["q1", "a1-alt"]
    assert await count(app, t.messages, M.conversation_id == c["id"]) == 4


async def test_path_pages_newest_first_each_oldest_to_newest(new_user):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    made = [
        await say(a.client, cid, f"m{i}", role="user" if i % 2 == 0 else "assistant")
        for i in range(7)
    ]
    r = await a.client.get(f"/api/conversations/{cid}/messages", params={"limit": 3})
    assert r.status_code == 200
    p1 = r.json()
    assert texts(p1["items"]) == ["m4", "m5", "m6"]
    assert r.headers["X-Has-More"] == "true" and p1["next_cursor"] == made[4]["id"]
    assert r.headers["X-Next-Before"] == made[4]["id"]
    assert p1["active_leaf_id"] == made[6]["id"]
    r = await a.client.get(
        f"/api/conversations/{cid}/messages", params={"limit": 3, "before": p1["next_cursor"]}
    )
    p2 = r.json()
    assert texts(p2["items"]) == ["m1", "m2", "m3"] and r.headers["X-Has-More"] == "true"
    r = await a.client.get(
        f"/api/conversations/{cid}/messages", params={"limit": 3, "before": p2["next_cursor"]}
    )
    p3 = r.json()
    assert texts(p3["items"]) == ["m0"]
    assert p3["next_cursor"] is None and r.headers["X-Has-More"] == "false"
    assert "X-Next-Before" not in r.headers
    # exactly-full last page: no phantom next page
    r = await a.client.get(f"/api/conversations/{cid}/messages", params={"limit": 7})
    assert len(r.json()["items"]) == 7 and r.json()["next_cursor"] is None
    # default limit and an empty conversation
    empty = (await new_conv(a.client))["id"]
    r = await a.client.get(f"/api/conversations/{empty}/messages")
    assert r.json() == {"items": [], "next_cursor": None, "active_leaf_id": None}
    assert r.headers["X-Has-More"] == "false"


async def test_branch_info_on_path_and_tree_mode(new_user):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q1 = await say(a.client, cid, "q1")
    a1 = await say(a.client, cid, "a1", role="assistant")
    q2 = await say(a.client, cid, "q2")
    a2 = await say(a.client, cid, "a2", role="assistant")
    a2b = await say(a.client, cid, "a2b", role="assistant", parent=q2["id"])  # regenerate
    q2b = await say(a.client, cid, "q2b", parent=a1["id"])  # edit-and-resend
    a2c = await say(a.client, cid, "a2c", role="assistant")
    items = await path(a.client, cid)
    assert texts(items) == ["q1", "a1", "q2b", "a2c"]
    by = {m["text"]: m for m in items}
    assert by["q2b"]["sibling_ids"] == [q2["id"], q2b["id"]]
    assert (by["q2b"]["branch_index"], by["q2b"]["branch_count"]) == (1, 2)
    assert (by["a2c"]["branch_index"], by["a2c"]["branch_count"]) == (0, 1)
    assert by["q1"]["sibling_ids"] == [q1["id"]]
    r = await a.client.get(f"/api/conversations/{cid}/messages", params={"mode": "tree"})
    assert r.status_code == 200
    tree = {m["id"]: m for m in r.json()["items"]}
    assert set(tree) == {m["id"] for m in (q1, a1, q2, a2, a2b, q2b, a2c)}
    assert tree[a2b["id"]]["sibling_ids"] == [a2["id"], a2b["id"]]
    assert tree[a2b["id"]]["branch_index"] == 1 and tree[a2["id"]]["branch_index"] == 0
    assert tree[a2["id"]]["parent_id"] == q2["id"]
    assert r.json()["active_leaf_id"] == a2c["id"]
    # a single message read carries the same branch info
    r = await a.client.get(f"/api/conversations/{cid}/messages/{a2b['id']}")
    assert r.status_code == 200 and r.json()["sibling_ids"] == [a2["id"], a2b["id"]]


async def test_switch_branch_goes_to_newest_descendant(new_user):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q1 = await say(a.client, cid, "q1")
    a1 = await say(a.client, cid, "a1", role="assistant")
    q2 = await say(a.client, cid, "q2")
    a2 = await say(a.client, cid, "a2", role="assistant")
    q2b = await say(a.client, cid, "q2b", parent=a1["id"])
    a2b = await say(a.client, cid, "a2b", role="assistant")
    await tick()
    a2x = await say(a.client, cid, "a2x", role="assistant", parent=q2["id"])  # newest under q2
    await say(a.client, cid, "back on b", parent=a2b["id"])  # leaf now under q2b
    r = await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": q2["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["active_leaf_id"] == a2x["id"]
    assert texts(await path(a.client, cid)) == ["q1", "a1", "q2", "a2x"]
    # choosing a leaf keeps it
    r = await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": a2["id"]})
    assert r.json()["active_leaf_id"] == a2["id"]
    # choosing the root follows the newest leaf of the whole tree
    r = await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": q1["id"]})
    assert texts(await path(a.client, cid)) == ["q1", "a1", "q2b", "a2b", "back on b"]
    # the next append goes under the switched-to leaf
    r = await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": q2b["id"]})
    nxt = await say(a.client, cid, "after switch")
    assert nxt["parent_id"] == r.json()["active_leaf_id"]


async def test_edit_in_place_and_search_text_from_text_blocks(new_user, app):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    blocks = [
        {"kind": "text", "text": "hello "},
        {"kind": "thinking", "text": "SECRET"},
        {"type": "tool_call", "name": "x", "input": {"q": "HIDDEN"}},
        {"kind": "text", "text": "world"},
    ]
    q = await say(a.client, cid, blocks)
    assert q["text"] == "hello world"
    assert [b["kind"] for b in q["blocks"]] == ["text", "thinking", "tool_call", "text"]
    [row] = await rows(app, t.messages, M.id == q["id"])
    assert row.search_text == "hello world"
    ans = await say(a.client, cid, "answer", role="assistant")
    before = await conv(a.client, cid)
    await tick()
    r = await a.client.patch(
        f"/api/conversations/{cid}/messages/{q['id']}",
        json={
            "content": [
                {"kind": "text", "text": "edited"},
                {"kind": "thinking", "text": "still secret"},
            ]
        },
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["id"] == q["id"] and out["text"] == "edited"
    assert out["created_at"] == q["created_at"] and out["parent_id"] is None
    [row] = await rows(app, t.messages, M.id == q["id"])
    assert row.search_text == "edited"
    after = await conv(a.client, cid)
    assert after["message_count"] == 2 and after["active_leaf_id"] == ans["id"]
    assert after["updated_at"] > before["updated_at"]
    assert texts(await path(a.client, cid)) == ["edited", "answer"]
    # a plain string edit
    r = await a.client.patch(
        f"/api/conversations/{cid}/messages/{ans['id']}", json={"content": "A!"}
    )
    assert r.json()["blocks"] == [{"kind": "text", "text": "A!"}]


async def _chain(client, cid):
    q1 = await say(client, cid, "q1")
    a1 = await say(client, cid, "a1", role="assistant")
    q2 = await say(client, cid, "q2")
    a2 = await say(client, cid, "a2", role="assistant")
    a2b = await say(client, cid, "a2b", role="assistant", parent=q2["id"])
    q3 = await say(client, cid, "q3")
    a3 = await say(client, cid, "a3", role="assistant")
    return q1, a1, q2, a2, a2b, q3, a3


async def test_delete_round_reattaches_later_turns(new_user, app):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q1, a1, q2, a2, a2b, q3, a3 = await _chain(a.client, cid)
    # a later turn under the other variant survives too
    q3x = await say(a.client, cid, "q3x", parent=a2["id"])
    await a.client.patch(f"/api/conversations/{cid}/active-leaf", json={"leaf_id": a3["id"]})
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{a2b['id']}")  # via an answer
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body["deleted_ids"]) == {q2["id"], a2["id"], a2b["id"]} and body["deleted"] == 3
    assert body["conversation"]["message_count"] == 5
    assert body["conversation"]["active_leaf_id"] == a3["id"]
    assert texts(await path(a.client, cid)) == ["q1", "a1", "q3", "a3"]
    left = {r.id: r for r in await rows(app, t.messages, M.conversation_id == cid)}
    assert set(left) == {q1["id"], a1["id"], q3["id"], a3["id"], q3x["id"]}
    assert left[q3["id"]].parent_id == a1["id"] and left[q3x["id"]].parent_id == a1["id"]
    # depth is a position: the moved turns keep theirs (nothing below them is rewritten), still
    # greater than their new parent's, so the path skips the deleted round's positions 2 and 3
    assert (left[q3["id"]].depth, left[a3["id"]].depth, left[q3x["id"]].depth) == (4, 5, 4)
    assert left[a1["id"]].depth == 1
    assert (await conv(a.client, cid))["message_count"] == 5
    # the moved turns are now siblings
    items = await path(a.client, cid)
    assert items[2]["sibling_ids"] == [q3["id"], q3x["id"]]


async def test_delete_round_by_question_and_leaf_repair(new_user):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q1, a1, q2, a2, a2b, q3, a3 = await _chain(a.client, cid)
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{q3['id']}")
    assert r.status_code == 200 and set(r.json()["deleted_ids"]) == {q3["id"], a3["id"]}
    c = await conv(a.client, cid)
    # the leaf was in the round: it moves to the newest leaf under the round's parent
    assert c["active_leaf_id"] == a2b["id"]
    assert c["message_count"] == 5 and c["last_message_at"] == a2b["created_at"]
    assert texts(await path(a.client, cid)) == ["q1", "a1", "q2", "a2b"]
    # deleting the root round reattaches everything below to no parent (roots)
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{q1['id']}")
    assert set(r.json()["deleted_ids"]) == {q1["id"], a1["id"]}
    items = await path(a.client, cid)
    assert texts(items) == ["q2", "a2b"] and items[0]["parent_id"] is None
    # positions are kept (they grow along the path; they skip where rounds were deleted)
    assert items[0]["depth"] == 2 and items[1]["depth"] == 3
    # deleting everything empties the conversation
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{q2['id']}")
    assert r.status_code == 200
    c = await conv(a.client, cid)
    assert c["message_count"] == 0 and c["active_leaf_id"] is None and c["last_message_at"] is None
    assert (await a.client.get(f"/api/conversations/{cid}/messages")).json()["items"] == []


async def test_delete_round_prunes_summary_blocks(new_user, app):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q1, a1, q2, a2, a2b, q3, a3 = await _chain(a.client, cid)
    blocks = [
        {"level": 0, "anchor_message_id": a1["id"], "from_message_id": q1["id"], "text": "s1"},
        {"level": 0, "anchor_message_id": a2["id"], "from_message_id": q2["id"], "text": "s2"},
    ]
    async with app.state.runtime.db.write() as c:
        await c.execute(
            update(t.conversations).where(t.conversations.c.id == cid).values(summary_blocks=blocks)
        )
    await a.client.delete(f"/api/conversations/{cid}/messages/{q2['id']}")
    assert [b["text"] for b in (await conv(a.client, cid))["summary_blocks"]] == ["s1"]


async def test_fork_copies_active_path(new_user, app):
    a = await new_user()
    src = await new_conv(a.client, title="source")
    cid = src["id"]
    q1, a1, q2, a2, a2b, q3, a3 = await _chain(a.client, cid)
    r = await a.client.post(f"/api/conversations/{cid}/fork", json={})
    assert r.status_code == 201, r.text
    f = r.json()
    assert f["id"] != cid and f["title"] == "source" and f["message_count"] == 6
    items = await path(a.client, f["id"])
    assert texts(items) == ["q1", "a1", "q2", "a2b", "q3", "a3"]
    assert not {m["id"] for m in items} & {m["id"] for m in (q1, a1, q2, a2, a2b, q3, a3)}
    # the copies' ids (one block made in the INSERT) look like any id and sort root → leaf
    assert all(re.fullmatch(r"msg_[0-9a-f]{32}", m["id"]) for m in items)
    assert [m["id"] for m in items] == sorted(m["id"] for m in items)
    assert items[0]["id"] > a3["id"] and items[0]["parent_id"] is None
    assert [m["parent_id"] for m in items[1:]] == [m["id"] for m in items[:-1]]
    assert [m["depth"] for m in items] == list(range(6))
    assert all(m["branch_count"] == 1 for m in items)
    assert f["active_leaf_id"] == items[-1]["id"] and f["last_message_at"] == a3["created_at"]
    assert [m["role"] for m in items] == ["user", "assistant"] * 3
    assert await count(app, t.messages, M.conversation_id == cid) == 7  # source untouched
    # fork up to a message, with a title; forking an empty conversation; no body at all
    r = await a.client.post(
        f"/api/conversations/{cid}/fork", json={"message_id": a1["id"], "title": "early"}
    )
    assert r.json()["title"] == "early"
    assert texts(await path(a.client, r.json()["id"])) == ["q1", "a1"]
    empty = (await new_conv(a.client))["id"]
    r = await a.client.post(f"/api/conversations/{empty}/fork")
    assert r.status_code == 201 and r.json()["message_count"] == 0
    assert r.json()["active_leaf_id"] is None
    # the fork is a conversation of its own: appending there leaves the source alone
    await say(a.client, f["id"], "only in fork")
    assert texts(await path(a.client, cid))[-1] == "a3"


async def test_fork_of_a_path_that_skips_positions(new_user, app):
    """After a round deletion the path skips positions; a fork copies it with its positions
    (less the lowest copied one, so the copy's root is at 0), parents and jump pointers in the
    copy, and a ``limit`` counts positions: at most that many messages."""
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    made = [await say(a.client, cid, f"m{i}", role=("user", "assistant")[i % 2]) for i in range(12)]
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{made[4]['id']}")  # m4 + m5
    assert r.status_code == 200, r.text
    src = await path(a.client, cid)
    assert [m["depth"] for m in src] == [0, 1, 2, 3, 6, 7, 8, 9, 10, 11]
    db, p = app.state.runtime.db, Principal(id=a.id, email="x@example.com")
    whole = await service.fork(db, p, cid, ForkIn())
    items = await path(a.client, whole["id"])
    assert texts(items) == texts(src) and [m["depth"] for m in items] == [m["depth"] for m in src]
    assert [m["parent_id"] for m in items[1:]] == [m["id"] for m in items[:-1]]
    assert whole["message_count"] == 10 and whole["active_leaf_id"] == items[-1]["id"]
    # limit 7: positions 5..11 may be copied (m6..m11: six messages), shifted to start at 0
    part = await service.fork(db, p, cid, ForkIn(), limit=7)
    items = await path(a.client, part["id"])
    assert texts(items) == [f"m{i}" for i in range(6, 12)] and items[0]["parent_id"] is None
    assert [m["depth"] for m in items] == list(range(6))
    assert [m["parent_id"] for m in items[1:]] == [m["id"] for m in items[:-1]]
    # every copied pointer is an ancestor at its position, or names no message at all (read
    # from the table: once the copies have run, which is after the forks answered)
    await forks.copies_done()
    for fork in (whole, part):
        got = {r.id: r for r in await rows(app, t.messages, M.conversation_id == fork["id"])}
        for r in got.values():
            if r.jump_id in got:
                assert got[r.jump_id].depth == r.jump_depth < r.depth
            else:
                assert r.jump_id is None or await count(app, t.messages, M.id == r.jump_id) == 0
        # switching in the copy finds leaves through those pointers
        first = min(got.values(), key=lambda r: r.depth)
        out = await a.client.patch(
            f"/api/conversations/{fork['id']}/active-leaf", json={"leaf_id": first.id}
        )
        assert out.json()["active_leaf_id"] == fork["active_leaf_id"]


async def test_a_fork_leaves_the_engines_plan_mode_for_the_rest_of_its_transaction(new_user, app):
    """PostgreSQL: the copy's INSERT runs with ``plan_cache_mode = auto`` (its foreign-key
    checks reuse their plans); the statements after it get the engine's setting back."""
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    for i in range(4):
        await say(a.client, cid, f"m{i}", role=("user", "assistant")[i % 2])
    db = app.state.runtime.db
    if db.dialect != "postgresql":
        pytest.skip("a PostgreSQL setting")
    p = Principal(id=a.id, email="x@example.com")
    async with db.write() as c:
        src = await store.get_conversation(c, a.id, cid)
        new = await store.get_conversation(c, a.id, await store.insert_conversation(c, a.id))
        plan, busy = await fork_store.plan_copy(c, cid, src.active_leaf_id, 100)
        assert busy == 0 and plan is not None
        await fork_store.mark_pending(c, new.id, cid, plan)  # what the fork writes first
        await fork_store.copy_planned(c, cid, plan, new)
        mode = (await c.exec_driver_sql("SHOW plan_cache_mode")).scalar()
    assert mode == "force_custom_plan"
    items = await path(a.client, new.id)
    assert texts(items) == [f"m{i}" for i in range(4)]
    assert (await service.get_conversation(db, p, new.id))["message_count"] == 4


def test_id_blocks_are_consecutive_and_unique():
    before = new_id("msg")
    head, low = id_block("msg", 1000)
    block = [f"{head}{low + i:08x}" for i in range(1000)]
    after = new_id("msg")
    assert all(re.fullmatch(r"msg_[0-9a-f]{32}", x) for x in block)
    assert before < block[0] and block == sorted(set(block)) and block[-1] < after
    h2, l2 = id_block("msg", 2**32)  # a whole block never carries into the fixed digits
    assert l2 == 0 and h2 > head
    with pytest.raises(ValueError):
        id_block("msg", 0)


async def test_counters_follow_every_write(new_user):
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    stamps = []
    for i in range(3):
        m = await say(a.client, cid, f"m{i}", role="user" if i % 2 == 0 else "assistant")
        c = await conv(a.client, cid)
        assert c["message_count"] == i + 1 and c["last_message_at"] == m["created_at"]
        stamps.append(c["updated_at"])
        await tick()
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    r = await a.client.delete(f"/api/conversations/{cid}/messages/{m['id']}")
    c = await conv(a.client, cid)
    # m2 is a user message whose parent m1 is an assistant: its round is itself
    assert r.json()["deleted_ids"] == [m["id"]]
    assert c["message_count"] == 2 and c["updated_at"] > stamps[-1]
    items = await path(a.client, cid)
    assert c["last_message_at"] == items[-1]["created_at"]


async def test_concurrent_appends_form_one_chain(new_user, app):
    """Appends racing on one conversation each see the previous one's leaf (the row lock)."""
    import asyncio

    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    made = await asyncio.gather(*(say(a.client, cid, f"m{i}") for i in range(12)))
    c = await conv(a.client, cid)
    assert c["message_count"] == 12
    items = await path(a.client, cid)
    assert len(items) == 12 and {m["id"] for m in items} == {m["id"] for m in made}
    assert [m["depth"] for m in items] == list(range(12))
    assert c["active_leaf_id"] == items[-1]["id"]


async def test_dangling_leaf_is_repaired_on_append(new_user, app):
    """A leaf pointer to a vanished message (say, written by an older version) is repaired to
    the newest leaf instead of failing every send."""
    a = await new_user()
    cid = (await new_conv(a.client))["id"]
    q = await say(a.client, cid, "q")
    ans = await say(a.client, cid, "a", role="assistant")
    async with app.state.runtime.db.write() as c:
        await c.execute(
            update(t.conversations)
            .where(t.conversations.c.id == cid)
            .values(active_leaf_id="msg_gone")
        )
    m = await say(a.client, cid, "next")
    assert m["parent_id"] == ans["id"]
    assert (await conv(a.client, cid))["active_leaf_id"] == m["id"]
    assert texts(await path(a.client, cid)) == ["q", "a", "next"]
    # an explicit parent that does not exist is still an error
    r = await a.client.post(
        f"/api/conversations/{cid}/messages",
        json={"content": "x", "generate": False, "parent_id": "msg_gone"},
    )
    assert r.status_code == 422 and q["id"]

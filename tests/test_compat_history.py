"""/rpc default conversation and history paging (seed 000), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import random

from chatmem.compat import store
from chatmem.compat.contracts import AgentConversationMessagesPage, AgentConversationResponse
from chatmem.db import schema as t

from .test_compat_support import count_rows, data_of, db_of, error_of, insert_agent, insert_messages

BASE = 1_700_000_000_000


async def test_first_load_creates_default_conversation(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id, name="Lin Xia", opening_message="嗨")
    r = await a.client.get(f"/rpc/chat/inbox/{aid}/conversation")
    conv = data_of(r, AgentConversationResponse)
    assert conv.agentId == aid and conv.title == "Lin Xia" and conv.summary is None
    assert conv.messageCount == 0 and conv.messages == [] and conv.nextCursor is None
    assert conv.openingMessage == "嗨"
    again = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert again.conversationId == conv.conversationId
    assert await count_rows(app, t.conversations, agent_id=aid) == 1
    async with db_of(app).read() as c:
        row = await store.default_conversation(c, a.id, aid)
    assert row.id == conv.conversationId and row.is_agent_default == 1


async def test_statuses_mapped_and_streaming_not_listed(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    ids = await insert_messages(
        app,
        conv.conversationId,
        [
            {"role": "user", "text": "q1", "created_at": BASE},
            {"role": "assistant", "text": "a1", "created_at": BASE + 1},
            {"role": "user", "text": "q2", "created_at": BASE + 2},
            {"role": "assistant", "text": "partial", "created_at": BASE + 3, "status": "error"},
            {"role": "user", "text": "q3", "created_at": BASE + 4},
            {"role": "assistant", "text": "typing…", "created_at": BASE + 5, "status": "streaming"},
        ],
    )
    got = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert [m.id for m in got.messages] == ids[:5]
    assert [m.status for m in got.messages] == ["completed"] * 3 + ["failed", "completed"]
    assert [m.content for m in got.messages] == ["q1", "a1", "q2", "partial", "q3"]
    assert all(m.conversationId == conv.conversationId and m.agentId == aid for m in got.messages)
    assert got.messageCount == 6 and got.nextCursor is None
    page = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/messages"), AgentConversationMessagesPage
    )
    assert [m.id for m in page.messages] == ids[:5]


async def test_pages_of_40_with_seed_cursor(app, new_user):
    """No shared milliseconds: the cursor is the seed's bare createdAtMs of the oldest message."""
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    rows = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "text": f"m{i}",
            "created_at": BASE + 10 * i,
        }
        for i in range(95)
    ]
    ids = await insert_messages(app, conv.conversationId, rows)
    first = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert [m.id for m in first.messages] == ids[55:]
    assert first.nextCursor == str(BASE + 10 * 55)
    second = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": first.nextCursor}),
        AgentConversationMessagesPage,
    )
    assert [m.id for m in second.messages] == ids[15:55]
    assert second.nextCursor == str(BASE + 150)
    third = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": second.nextCursor}),
        AgentConversationMessagesPage,
    )
    assert [m.id for m in third.messages] == ids[:15] and third.nextCursor is None
    # A cursor the client made up is honoured the seed's way: strictly older than that ms.
    mid = data_of(
        await a.client.get(
            f"/rpc/chat/inbox/{aid}/messages", params={"cursor": str(BASE + 10 * 3 + 5)}
        ),
        AgentConversationMessagesPage,
    )
    assert [m.id for m in mid.messages] == ids[:4] and mid.nextCursor is None
    frac = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": f"{BASE + 30}.5"}),
        AgentConversationMessagesPage,
    )
    assert [m.id for m in frac.messages] == ids[:4]


async def test_exactly_40_messages_means_no_cursor(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    await insert_messages(
        app,
        conv.conversationId,
        [{"role": "user", "text": f"m{i}", "created_at": BASE + i} for i in range(40)],
    )
    got = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert len(got.messages) == 40 and got.nextCursor is None


async def test_thousand_messages_sharing_milliseconds_each_listed_once(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    rng = random.Random(6)
    rows, ms = [], BASE
    while len(rows) < 1000:
        # bursts of 1–90 messages in one millisecond (some bursts straddle a page boundary)
        for _ in range(rng.choice([1, 1, 2, 7, 39, 40, 41, 90])):
            rows.append(
                {
                    "role": rng.choice(["user", "assistant"]),
                    "text": f"t{len(rows)}",
                    "created_at": ms,
                    "id": f"msg_{rng.getrandbits(64):016x}",
                }
            )
        ms += rng.choice([1, 1, 3])
    rows = rows[:1000]
    await insert_messages(app, conv.conversationId, rows)

    first = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    pages = [first.messages]
    cursor, shared_seen = first.nextCursor, False
    while cursor is not None:
        shared_seen = shared_seen or ":" in cursor
        page = data_of(
            await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": cursor}),
            AgentConversationMessagesPage,
        )
        assert page.messages, "a cursor is only given when older messages exist"
        assert len(page.messages) == 40 or page.nextCursor is None
        pages.append(page.messages)
        cursor = page.nextCursor
    assert shared_seen
    for p in pages:  # oldest → newest within a page
        keys = [(m.createdAtMs, m.id) for m in p]
        assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    seen = [m.id for p in reversed(pages) for m in p]
    assert len(seen) == 1000 and len(set(seen)) == 1000
    assert set(seen) == {r["id"] for r in rows}
    assert [m.createdAtMs for p in reversed(pages) for m in p] == sorted(
        r["created_at"] for r in rows
    )


async def test_bad_cursor_is_rejected_and_writes_nothing(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    for bad in [
        "abc",
        "0",
        "-5",
        "nan",
        "inf",
        "-inf",
        "",
        "12:",
        "1.5:msg_x",
        "x:msg_1",
        "12:x:msg_1",
        "12:-1:msg_1",
        "12:3:",
        "12:3:a:b",
        "0x10",
    ]:
        r = await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": bad})
        error_of(r, 400, "Invalid cursor")
    assert await count_rows(app, t.conversations, agent_id=aid) == 0
    # An id-carrying cursor must name a message of this conversation.
    data_of(await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse)
    r = await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": "5:msg_nope"})
    error_of(r, 400, "Invalid cursor")


async def test_question_reads_before_its_answer_in_one_millisecond(app, new_user):
    """A turn writes the user message and the assistant placeholder in the same millisecond, and
    the placeholder's id may sort first: depth (parent before child) breaks the tie."""
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    ids = await insert_messages(
        app,
        conv.conversationId,
        [
            {"role": "user", "text": "q", "created_at": BASE, "id": "msg_b"},
            {"role": "assistant", "text": "a", "created_at": BASE, "id": "msg_a"},
        ],
    )
    got = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert [m.id for m in got.messages] == ids == ["msg_b", "msg_a"]


async def test_two_part_cursor_is_accepted(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    ids = await insert_messages(
        app,
        conv.conversationId,
        [
            {"role": "user", "text": f"m{i}", "created_at": BASE, "id": f"msg_{i:02d}"}
            for i in range(45)
        ],
    )
    first = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert [m.id for m in first.messages] == ids[5:]
    assert first.nextCursor == f"{BASE}:5:msg_05"
    page = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/messages", params={"cursor": f"{BASE}:msg_05"}),
        AgentConversationMessagesPage,
    )
    assert [m.id for m in page.messages] == ids[:5] and page.nextCursor is None


async def test_other_users_agent_is_not_available(app, new_user):
    a, b = await new_user(), await new_user()
    aid = await insert_agent(app, a.id)
    for path in (
        f"/rpc/chat/inbox/{aid}/conversation",
        f"/rpc/chat/inbox/{aid}/messages",
        "/rpc/chat/inbox/agt_missing/conversation",
    ):
        env = error_of(await b.client.get(path), 404, "Agent is not available")
        assert env.error.code == "agent_not_available"
    assert await count_rows(app, t.conversations, user_id=b.id) == 0


async def test_concurrent_first_requests_create_one_conversation(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    results = await asyncio.gather(
        *[a.client.get(f"/rpc/chat/inbox/{aid}/conversation") for _ in range(8)]
    )
    ids = {data_of(r, AgentConversationResponse).conversationId for r in results}
    assert len(ids) == 1
    assert await count_rows(app, t.conversations, agent_id=aid) == 1


async def test_get_or_create_race_inside_open_transactions(app, new_user):
    """The second creator runs while the first transaction is still open: it must neither fail nor
    create a second row, and must read back the winner's conversation."""
    a = await new_user()
    aid = await insert_agent(app, a.id)
    db = db_of(app)
    async with db.read() as c:
        agent = await store.owned_agent(c, a.id, aid)

    async def second():
        async with db.write() as c:
            return (await store.ensure_default_conversation(c, a.id, agent)).id

    async with db.write() as c:
        first = (await store.ensure_default_conversation(c, a.id, agent)).id
        task = asyncio.create_task(second())
        await asyncio.sleep(0.05)  # let the second writer reach its insert (blocked meanwhile)
        assert not task.done()
    assert await task == first
    assert await count_rows(app, t.conversations, agent_id=aid) == 1


async def test_agent_from_the_agents_api_and_summary_from_compaction(app, new_user):
    """An agent made through /api/agents works here; ``summary`` is conversations.summary (the
    rendered summary compaction writes) — the compat layer never writes a second summary."""
    a = await new_user()
    r = await a.client.post(
        "/api/agents", json={"name": "Mo", "handle": "mo", "opening_message": "早上好"}
    )
    assert r.status_code == 201, r.text
    aid = r.json()["id"]
    conv = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert (conv.title, conv.openingMessage, conv.summary) == ("Mo", "早上好", None)
    async with db_of(app).write() as c:
        await c.execute(
            t.conversations.update()
            .where(t.conversations.c.id == conv.conversationId)
            .values(summary="用户喜欢猫。")
        )
    again = data_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    assert again.summary == "用户喜欢猫。"
    # Deleting the agent through the agents API takes its conversation along; it is then gone here.
    assert (await a.client.delete(f"/api/agents/{aid}")).status_code == 204
    error_of(
        await a.client.get(f"/rpc/chat/inbox/{aid}/conversation"), 404, "Agent is not available"
    )
    assert await count_rows(app, t.conversations, agent_id=aid) == 0

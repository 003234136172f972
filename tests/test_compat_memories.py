"""/rpc agent memories: list (status mapping, order, source message, isolation)."""

from __future__ import annotations

from sqlalchemy import insert, select

from chatmem.compat.contracts import (
    AgentConversationResponse,
    AgentMemory,
    AgentMemoryList,
    SuccessResult,
)
from chatmem.db import schema as t
from chatmem.db.ids import new_id

from .test_compat_support import data_of, db_of, error_of, insert_agent, insert_messages

BASE = 1_700_000_000_000


async def insert_memory(app, user_id: str, agent_id: str | None, text: str, **kw) -> str:
    mid = kw.pop("id", None) or new_id("mem")
    values = dict(
        id=mid,
        user_id=user_id,
        agent_id=agent_id,
        memory_text=text,
        memory_type=kw.pop("memory_type", "偏好"),
        status=kw.pop("status", "ACTIVE"),
        importance=kw.pop("importance", 3),
        created_at=kw.pop("created_at", BASE),
        updated_at=kw.pop("updated_at", BASE),
        **kw,
    )
    async with db_of(app).write() as c:
        await c.execute(insert(t.memories).values(**values))
    return mid


async def _agent_with_message(app, user):
    aid = await insert_agent(app, user.id)
    conv = data_of(
        await user.client.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
    )
    [msg] = await insert_messages(
        app,
        conv.conversationId,
        [{"role": "user", "text": "以后回复我尽量直接一点", "created_at": BASE}],
    )
    return aid, msg


async def test_list_maps_statuses_and_orders_newest_first(app, new_user):
    a = await new_user()
    aid, msg = await _agent_with_message(app, a)
    m_active = await insert_memory(
        app,
        a.id,
        aid,
        "回复直接一点",
        source_message_id=msg,
        importance=5,
        memory_type="对话风格",
        updated_at=BASE + 5,
    )
    m_qd = await insert_memory(
        app,
        a.id,
        aid,
        "这周在出差",
        status="QUERY_DEPENDENT",
        updated_at=BASE + 4,
        source_message_ids=[msg],
    )
    m_dis = await insert_memory(app, a.id, aid, "喜欢猫", status="DISABLED", updated_at=BASE + 3)
    m_unk = await insert_memory(
        app, a.id, aid, "住在上海", status="UNKNOWN_CURRENT", updated_at=BASE + 2, memory_type=""
    )
    await insert_memory(
        app, a.id, aid, "住在北京", status="STALE", updated_at=BASE + 6
    )  # superseded
    await insert_memory(app, a.id, aid, "旧的", status="DELETED", updated_at=BASE + 7)
    await insert_memory(app, a.id, None, "user-wide, not this agent's", updated_at=BASE + 8)
    other_agent = await insert_agent(app, a.id, name="Other")
    await insert_memory(app, a.id, other_agent, "another agent's", updated_at=BASE + 9)

    got = data_of(await a.client.get(f"/rpc/agent/my/{aid}/memories"), AgentMemoryList)
    assert [m.id for m in got.items] == [m_active, m_qd, m_dis, m_unk]
    assert [m.status for m in got.items] == ["active", "active", "disabled", "disabled"]
    first = got.items[0]
    assert (first.type, first.content, first.importance, first.agentId) == (
        "对话风格",
        "回复直接一点",
        5,
        aid,
    )
    assert first.sourceMessageId == msg and first.sourceMessage.id == msg
    assert (first.sourceMessage.role, first.sourceMessage.content) == (
        "user",
        "以后回复我尽量直接一点",
    )
    assert got.items[1].sourceMessageId == msg and got.items[1].sourceMessage is not None
    assert got.items[2].sourceMessage is None and got.items[2].sourceMessageId is None
    assert got.items[3].type == "重要事实"


async def test_list_limit_100(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    ids = [await insert_memory(app, a.id, aid, f"m{i}", updated_at=BASE + i) for i in range(105)]
    got = data_of(await a.client.get(f"/rpc/agent/my/{aid}/memories"), AgentMemoryList)
    assert [m.id for m in got.items] == list(reversed(ids))[:100]


async def test_other_users_agent_memories_are_not_available(app, new_user):
    a, b = await new_user(), await new_user()
    aid, msg = await _agent_with_message(app, a)
    await insert_memory(app, a.id, aid, "secret", source_message_id=msg)
    error_of(await b.client.get(f"/rpc/agent/my/{aid}/memories"), 404, "Agent is not available")
    # A memory of b's pointing at a's message never reveals that message.
    b_aid = await insert_agent(app, b.id)
    await insert_memory(app, b.id, b_aid, "points elsewhere", source_message_id=msg)
    got = data_of(await b.client.get(f"/rpc/agent/my/{b_aid}/memories"), AgentMemoryList)
    assert [m.content for m in got.items] == ["points elsewhere"]
    assert got.items[0].sourceMessage is None


async def _events(app, memory_id: str) -> list[str]:
    async with db_of(app).read() as c:
        rows = (
            await c.execute(
                select(t.memory_events.c.event)
                .where(t.memory_events.c.memory_id == memory_id)
                .order_by(t.memory_events.c.created_at, t.memory_events.c.id)
            )
        ).all()
    return [r.event for r in rows]


async def _status(app, memory_id: str) -> str:
    async with db_of(app).read() as c:
        return (
            await c.execute(select(t.memories.c.status).where(t.memories.c.id == memory_id))
        ).scalar_one()


async def test_patch_edits_and_toggles_with_audit(app, new_user):
    a = await new_user()
    aid, msg = await _agent_with_message(app, a)
    mid = await insert_memory(app, a.id, aid, "喜欢猫", source_message_id=msg)
    url = f"/rpc/agent/my/{aid}/memories/{mid}"
    out = data_of(
        await a.client.patch(
            url, json={"type": "  偏好 ", "content": " 喜欢橘猫 ", "importance": 4}
        ),
        AgentMemory,
    )
    assert (out.type, out.content, out.importance, out.status) == ("偏好", "喜欢橘猫", 4, "active")
    assert out.updatedAtMs >= BASE and out.sourceMessage.id == msg
    out = data_of(await a.client.patch(url, json={"status": "disabled"}), AgentMemory)
    assert out.status == "disabled" and await _status(app, mid) == "DISABLED"
    out = data_of(await a.client.patch(url, json={"status": "active"}), AgentMemory)
    assert out.status == "active" and await _status(app, mid) == "ACTIVE"
    assert await _events(app, mid) == ["edited", "disabled", "enabled"]
    listed = data_of(await a.client.get(f"/rpc/agent/my/{aid}/memories"), AgentMemoryList)
    assert [(m.id, m.content) for m in listed.items] == [(mid, "喜欢橘猫")]


async def test_patch_same_seed_status_keeps_native_status(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    mid = await insert_memory(app, a.id, aid, "这周在出差", status="QUERY_DEPENDENT")
    out = data_of(
        await a.client.patch(
            f"/rpc/agent/my/{aid}/memories/{mid}", json={"status": "active", "importance": 2}
        ),
        AgentMemory,
    )
    assert (out.status, out.importance) == ("active", 2)
    assert await _status(app, mid) == "QUERY_DEPENDENT"


async def test_patch_validation_writes_nothing(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    mid = await insert_memory(app, a.id, aid, "喜欢猫")
    url = f"/rpc/agent/my/{aid}/memories/{mid}"
    for body in (
        {"content": "   "},
        {"content": "x" * 2001},
        {"type": "t" * 81},
        {"importance": 0},
        {"importance": 6},
        {"importance": 2.5},
        {"importance": "3"},
        {"status": "deleted"},
        {"status": "ACTIVE"},
    ):
        env = error_of(await a.client.patch(url, json=body), 400, "Invalid request")
        assert env.error.details
    assert await _events(app, mid) == []
    assert await _status(app, mid) == "ACTIVE"


async def test_delete_is_soft_and_audited(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    mid = await insert_memory(app, a.id, aid, "喜欢猫")
    url = f"/rpc/agent/my/{aid}/memories/{mid}"
    assert data_of(await a.client.delete(url), SuccessResult).success is True
    assert await _status(app, mid) == "DELETED" and await _events(app, mid) == ["deleted"]
    listed = data_of(await a.client.get(f"/rpc/agent/my/{aid}/memories"), AgentMemoryList)
    assert listed.items == []
    error_of(await a.client.delete(url), 404)
    error_of(await a.client.patch(url, json={"content": "again"}), 404)


async def test_patch_and_delete_scoped_to_user_and_agent(app, new_user):
    a, b = await new_user(), await new_user()
    aid = await insert_agent(app, a.id)
    other = await insert_agent(app, a.id, name="Other")
    mid = await insert_memory(app, a.id, aid, "喜欢猫")
    b_aid = await insert_agent(app, b.id)
    error_of(
        await b.client.patch(f"/rpc/agent/my/{aid}/memories/{mid}", json={"content": "hacked"}),
        404,
        "Agent is not available",
    )
    error_of(
        await b.client.delete(f"/rpc/agent/my/{aid}/memories/{mid}"), 404, "Agent is not available"
    )
    error_of(
        await b.client.patch(f"/rpc/agent/my/{b_aid}/memories/{mid}", json={"content": "hacked"}),
        404,
    )
    error_of(await b.client.delete(f"/rpc/agent/my/{b_aid}/memories/{mid}"), 404)
    # The owner, through another of their agents: not that agent's memory.
    error_of(await a.client.delete(f"/rpc/agent/my/{other}/memories/{mid}"), 404)
    assert await _status(app, mid) == "ACTIVE" and await _events(app, mid) == []

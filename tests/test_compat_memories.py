"""/rpc agent memories: list (status mapping, order, source message, isolation)."""

from __future__ import annotations

from sqlalchemy import insert

from chatmem.compat.contracts import AgentConversationResponse, AgentMemoryList
from chatmem.db import schema as t
from chatmem.db.ids import new_id

from .test_compat_support import data_of, db_of, error_of, insert_agent, insert_messages

BASE = 1_700_000_000_000


async def insert_memory(app, user_id: str, agent_id: str | None, text: str, **kw) -> str:
    mid = kw.pop("id", None) or new_id("mem")
    values = dict(id=mid, user_id=user_id, agent_id=agent_id, memory_text=text,
                  memory_type=kw.pop("memory_type", "偏好"), status=kw.pop("status", "ACTIVE"),
                  importance=kw.pop("importance", 3), created_at=kw.pop("created_at", BASE),
                  updated_at=kw.pop("updated_at", BASE), **kw)
    async with db_of(app).write() as c:
        await c.execute(insert(t.memories).values(**values))
    return mid


async def _agent_with_message(app, user):
    aid = await insert_agent(app, user.id)
    conv = data_of(await user.client.get(f"/rpc/chat/inbox/{aid}/conversation"),
                   AgentConversationResponse)
    [msg] = await insert_messages(app, conv.conversationId, [
        {"role": "user", "text": "以后回复我尽量直接一点", "created_at": BASE}])
    return aid, msg


async def test_list_maps_statuses_and_orders_newest_first(app, new_user):
    a = await new_user()
    aid, msg = await _agent_with_message(app, a)
    m_active = await insert_memory(app, a.id, aid, "回复直接一点", source_message_id=msg,
                                   importance=5, memory_type="对话风格", updated_at=BASE + 5)
    m_qd = await insert_memory(app, a.id, aid, "这周在出差", status="QUERY_DEPENDENT",
                               updated_at=BASE + 4, source_message_ids=[msg])
    m_dis = await insert_memory(app, a.id, aid, "喜欢猫", status="DISABLED", updated_at=BASE + 3)
    m_unk = await insert_memory(app, a.id, aid, "住在上海", status="UNKNOWN_CURRENT",
                                updated_at=BASE + 2, memory_type="")
    await insert_memory(app, a.id, aid, "住在北京", status="STALE", updated_at=BASE + 6)
    await insert_memory(app, a.id, aid, "旧的", status="DELETED", updated_at=BASE + 7)
    await insert_memory(app, a.id, None, "user-wide, not this agent's", updated_at=BASE + 8)
    other_agent = await insert_agent(app, a.id, name="Other")
    await insert_memory(app, a.id, other_agent, "another agent's", updated_at=BASE + 9)

    got = data_of(await a.client.get(f"/rpc/agent/my/{aid}/memories"), AgentMemoryList)
    assert [m.id for m in got.items] == [m_active, m_qd, m_dis, m_unk]
    assert [m.status for m in got.items] == ["active", "active", "disabled", "disabled"]
    first = got.items[0]
    assert (first.type, first.content, first.importance, first.agentId) == (
        "对话风格", "回复直接一点", 5, aid)
    assert first.sourceMessageId == msg and first.sourceMessage.id == msg
    assert (first.sourceMessage.role, first.sourceMessage.content) == ("user", "以后回复我尽量直接一点")
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

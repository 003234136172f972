"""What a turn is given (the memory_source hook) on SQLite and PostgreSQL: injectable statuses and
validity, constraints first, importance and full-text relevance, the token budget, the seed-000
agent format, scope and consent. Plus the pure rank/pack functions."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import insert, select, update

from chatmem.auth.service import principal_for_key
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.ids import new_id
from chatmem.memory import retrieval

DAY = 86_400_000


def count(s: str) -> int:
    return max(1, len(s) // 4)


async def _put(rt, user_id, text, *, agent_id=None, **kw) -> str:
    now = now_ms()
    mid = new_id("mem")
    values = dict(
        id=mid,
        user_id=user_id,
        agent_id=agent_id,
        memory_text=text,
        created_at=kw.pop("created_at", now),
        updated_at=kw.pop("updated_at", now),
        **kw,
    )
    async with rt.db.write() as c:
        await c.execute(insert(t.memories).values(**values))
    return mid


async def _conv(rt, user_id, **kw):
    cid = new_id("c")
    now = now_ms()
    async with rt.db.write() as c:
        await c.execute(
            insert(t.conversations).values(
                id=cid, user_id=user_id, created_at=now, updated_at=now, **kw
            )
        )
        return (await c.execute(select(t.conversations).where(t.conversations.c.id == cid))).one()


async def _source(rt, key, conv, query="", budget=800):
    p = await principal_for_key(rt.db, key)
    async with rt.db.read() as c:
        return await rt.memory_source(
            c, principal=p, conv=conv, query=query, budget_tokens=budget, count_tokens=count
        )


async def test_only_current_rows_inside_their_validity_window(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    now = now_ms()
    keep = [
        await _put(rt, a.id, "Lives in Berlin"),
        await _put(
            rt,
            a.id,
            "In Tokyo this week",
            status="QUERY_DEPENDENT",
            valid_from=now - DAY,
            valid_until=now + DAY,
        ),
    ]
    for status in ("STALE", "UNKNOWN_CURRENT", "DISABLED", "DELETED"):
        await _put(rt, a.id, f"A {status} memory", status=status)
    await _put(rt, a.id, "Trip that ended", status="QUERY_DEPENDENT", valid_until=now - 1)
    await _put(rt, a.id, "Starts next month", valid_from=now + 30 * DAY)
    got = await _source(rt, a.key, await _conv(rt, a.id))
    assert sorted(got["ids"]) == sorted(keep)
    day = lambda ms: datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")  # noqa: E731
    assert set(got["lines"]) == {
        "[CURRENT] Lives in Berlin",  # a time-bound memory shows the dates it holds for
        f"[CONTEXT-DEPENDENT] In Tokyo this week ({day(now - DAY)} to {day(now + DAY - 1)})",
    }
    assert got["header"] == retrieval.NATIVE_HEADER


async def test_constraints_first_then_importance_and_relevance(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    low = await _put(rt, a.id, "Enjoys chess", importance=2)
    high = await _put(rt, a.id, "Has two kids", importance=5)
    rule = await _put(rt, a.id, "Is allergic to peanuts", memory_type="constraint", importance=1)
    cat = await _put(rt, a.id, "Has a cat named Tom", importance=3)
    dog = await _put(rt, a.id, "Walks the dog daily", importance=3)
    got = await _source(rt, a.key, await _conv(rt, a.id), query="what should I feed my cat?")
    assert got["ids"][0] == rule
    assert got["ids"].index(high) < got["ids"].index(low)
    assert got["ids"].index(cat) < got["ids"].index(dog)  # full-text relevance breaks the tie


async def test_packing_respects_the_token_budget(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    for i in range(40):
        await _put(
            rt,
            a.id,
            f"Memory number {i} with some padding words to cost tokens",
            importance=1 + i % 5,
        )
    conv = await _conv(rt, a.id)
    for budget in (0, 30, 120, 400, 5000):
        got = await _source(rt, a.key, conv, budget=budget)
        used = (
            count(got["header"]) + 1 + sum(count(x) + 1 for x in got["lines"])
            if got["lines"]
            else 0
        )
        assert used <= budget
        assert len(got["ids"]) == len(got["lines"]) == len(set(got["ids"]))
    assert len((await _source(rt, a.key, conv, budget=5000))["lines"]) == 40
    assert (await _source(rt, a.key, conv, budget=0)) == {"lines": [], "ids": [], "header": ""}


async def test_agent_conversations_use_seed000_lines_and_scope(app, new_user):
    rt = app.state.runtime
    a = await new_user()
    now = now_ms()
    agent_ids = []
    async with rt.db.write() as c:
        for name in ("Mira", "Kai"):
            aid = new_id("agt")
            agent_ids.append(aid)
            await c.execute(
                insert(t.agents).values(
                    id=aid, user_id=a.id, name=name, handle=name, created_at=now, updated_at=now
                )
            )
    mira, kai = agent_ids
    wide = await _put(
        rt, a.id, "用户住在上海", memory_type="重要事实", slot="home_location", value="上海"
    )
    await _put(
        rt,
        a.id,
        "用户住在北京",
        memory_type="重要事实",
        agent_id=mira,
        slot="home_location",
        value="北京",
        importance=4,
    )
    mine = await _put(rt, a.id, "不要用套路化话术", memory_type="边界", agent_id=mira, importance=5)
    await _put(rt, a.id, "Kai's own memory", agent_id=kai)
    conv = await _conv(rt, a.id, agent_id=mira)
    got = await _source(rt, a.key, conv, query="我住哪里")
    assert got["header"] == "以下是用户与该 Agent 的长期记忆，请优先尊重："
    assert got["lines"][0] == "- [边界 / 重要度 5] 不要用套路化话术" and got["ids"][0] == mine
    assert "- [重要事实 / 重要度 4] 用户住在北京" in got["lines"]
    assert wide not in got["ids"]  # the agent's own answer for the slot wins
    assert not any("Kai" in x for x in got["lines"])
    plain = await _source(rt, a.key, await _conv(rt, a.id))
    assert plain["ids"] == [wide]  # native conversations see user-wide memories only
    for i in range(20):
        await _put(rt, a.id, f"事实{i}", agent_id=mira)
    assert len((await _source(rt, a.key, conv, budget=5000))["lines"]) == 12  # seed 000's cap


async def test_workspace_consent_and_other_users(app, new_user):
    rt = app.state.runtime
    a, b = await new_user(), await new_user()
    await _put(rt, a.id, "Alice's secret")
    assert (await _source(rt, a.key, await _conv(rt, a.id, workspace_id="ws_1")))["lines"] == []
    assert (await _source(rt, b.key, await _conv(rt, b.id), query="secret"))["lines"] == []
    conv = await _conv(rt, a.id)
    assert (await _source(rt, a.key, conv))["lines"] == ["[CURRENT] Alice's secret"]
    async with rt.db.write() as c:
        await c.execute(
            update(t.users).where(t.users.c.id == a.id).values(settings={"memory_enabled": False})
        )
    assert (await _source(rt, a.key, conv))["lines"] == []
    async with rt.db.write() as c:
        await c.execute(
            update(t.users).where(t.users.c.id == a.id).values(settings={"memory_enabled": True})
        )
    rt.settings.memory_enabled = False
    try:
        assert (await _source(rt, a.key, conv))["lines"] == []
    finally:
        rt.settings.memory_enabled = True


def test_pure_rank_and_pack():
    class R:
        def __init__(
            self,
            id,
            text,
            importance=3,
            confidence=0.8,
            memory_type="",
            status="ACTIVE",
            updated_at=0,
        ):
            self.id, self.memory_text, self.importance = id, text, importance
            self.confidence, self.memory_type, self.status, self.updated_at = (
                confidence,
                memory_type,
                status,
                updated_at,
            )

    rows = [
        R("a", "Likes tea", 3),
        R("b", "Never call before 9am", 1, memory_type="constraint"),
        R("c", "用户住在北京", 3),
        R("d", "Likes tea too", 3, confidence=0.1),
    ]
    ranked = retrieval.rank(rows, {}, "我住在哪个城市", now=0, agent=False)
    assert [r.id for r in ranked][:2] == ["b", "c"]  # constraint, then the Chinese bigram match
    assert [r.id for r in ranked][-1] == "d"
    lines, ids = retrieval.pack(ranked, "H", 12, lambda s: 3, max_lines=10)  # (3+1) per line
    assert ids == ["b", "c"] and len(lines) == 2

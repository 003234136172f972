"""build_turn_context on real databases: random trees never overflow; agents, projects, memories."""

import asyncio
import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert

from chatmem.app import create_runtime
from chatmem.context import compaction as cp
from chatmem.context import service as ctx
from chatmem.context.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, counter_for
from chatmem.db import schema as t
from chatmem.db.clock import now_ms
from chatmem.db.engine import Database
from chatmem.db.ids import new_id

from .conftest import make_settings
from .ctx_helpers import append_chain, conv_row, demo_model, make_conv, make_user

C = counter_for("cl100k_base")
WORDS = ["alpha", "beta", "我喜欢茶", "42", "lorem ipsum", "Lisbon", "\n", "deadline friday"]


def request_tokens(messages) -> int:
    return REQUEST_OVERHEAD + sum(C.count(m.content) + MESSAGE_OVERHEAD for m in messages)


async def random_case(rt, user, seed: int, window: int, reserved: int, memory_budget: int):
    """A random tree (branches, long and empty messages), maybe compacted; check the invariant."""
    rnd = random.Random(seed)
    cid = await make_conv(rt.db, user.id)
    leaves = [None]
    all_ids: list[str] = []
    for _ in range(rnd.randint(1, 6)):
        parent = rnd.choice(leaves + all_ids[-3:]) if all_ids else None
        n = rnd.randint(1, 12)
        texts = []
        for i in range(n):
            size = rnd.choice([0, 3, 20, 120, 600])
            texts.append(
                (
                    "user" if i % 2 == 0 else "assistant",
                    " ".join(rnd.choice(WORDS) for _ in range(size)),
                )
            )
        ids = await append_chain(rt.db, user.id, cid, texts, parent=parent)
        all_ids += ids
        leaves.append(ids[-1])
    model = demo_model(window=window, max_output=reserved)
    settings_ = make_settings(
        rt.settings.database_url,
        memory_budget_tokens=memory_budget,
        keep_recent_rounds=rnd.randint(1, 4),
    )
    if rnd.random() < 0.5:
        await cp.compact(
            rt.db,
            conversation_id=cid,
            user_id=user.id,
            settings=settings_,
            model=model,
            summarizer=cp.ExtractiveSummarizer(C),
        )
    leaf = rnd.choice([x for x in leaves if x])
    res = None
    if rnd.random() < 0.5:  # compact inline first, outside the read, as a turn does
        rt.settings = settings_
        res = await ctx.ensure_compacted(
            rt, conversation_id=cid, user_id=user.id, parent_id=leaf, model=model
        )
    async with rt.db.read() as c:
        conv = await conv_row(rt.db, user.id, cid)
        inline, tail = await ctx.inline_compaction_needed(
            c, settings=settings_, conv=conv, parent_id=leaf, model=model
        )
        tc = await ctx.build_turn_context(
            c,
            settings=settings_,
            conv=conv,
            parent_id=leaf,
            model=model,
            principal=user,
            rt=rt,
            tail=tail if rnd.random() < 0.5 else None,
        )
    # the turn's check (the tail alone) and the assembled context's own decision agree
    assert inline == (tc.report["compaction"]["needed"] and tc.report["compaction"]["inline"])
    ctx.record_compaction(tc.report, res)
    pol = cp.policy_for(settings_, model)
    assert request_tokens(tc.messages) <= pol.limit == window - pol.reserved_output
    assert tc.report["total_tokens"] == request_tokens(tc.messages)
    async with rt.db.read() as c:
        from chatmem.conversations import blocks as blk
        from chatmem.conversations import store

        [row] = await store.rows_by_ids(c, [leaf])
    if blk.visible_text(row.blocks).strip():
        assert tc.report["message_ids"][-1] == leaf  # the newest turn is always there


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    window=st.integers(256, 4000),
    reserved=st.integers(1, 2000),
    memory_budget=st.integers(0, 1500),
)
@example(seed=413, window=256, reserved=1, memory_budget=0)  # the leaf is a summary's anchor
def test_random_trees_never_exceed_the_window(db_url, seed, window, reserved, memory_budget):
    async def go():
        rt = create_runtime(make_settings(db_url), db=Database(db_url))
        try:
            user = await make_user(rt.db, f"prop-{seed}-{window}-{reserved}-{now_ms()}@example.com")
            await random_case(rt, user, seed, window, reserved, memory_budget)
        finally:
            await rt.db.dispose()

    asyncio.run(go())


async def test_agent_conversation_uses_seed_000_order_with_memories(db_url):
    rt = create_runtime(make_settings(db_url), db=Database(db_url))
    try:
        user = await make_user(rt.db, "agent@example.com")
        aid = new_id("agt")
        async with rt.db.write() as c:
            await c.execute(
                insert(t.agents).values(
                    id=aid,
                    user_id=user.id,
                    name="小星",
                    handle="xiaoxing",
                    headline="温柔的倾听者",
                    personality_prompt="耐心",
                    default_prompt="你是小星。",
                    created_at=now_ms(),
                    updated_at=now_ms(),
                )
            )
        cid = await make_conv(rt.db, user.id, agent_id=aid)
        ids = await append_chain(
            rt.db, user.id, cid, [("user", "你好"), ("assistant", "你好呀"), ("user", "我喜欢喝茶")]
        )
        calls = []

        async def memory_source(c, *, principal, conv, query, budget_tokens, count_tokens):
            calls.append((principal.id, conv.id, query, budget_tokens, count_tokens("abc")))
            return {"lines": ["- [偏好 / 重要度 5] 喜欢喝茶"], "ids": ["mem_1"], "header": ""}

        rt.memory_source = memory_source
        async with rt.db.read() as c:
            conv = await conv_row(rt.db, user.id, cid)
            tc = await ctx.build_turn_context(
                c,
                settings=rt.settings,
                conv=conv,
                parent_id=ids[-1],
                model=demo_model(),
                principal=user,
                rt=rt,
            )
        sys = tc.messages[0].content
        assert sys.startswith("你是小星。\n" + "\n".join(ctx.AGENT_STYLE_LINES))
        assert sys.index(ctx.AGENT_MEMORY_HEADER) < sys.index("喜欢喝茶")
        assert tc.messages[1].role == "user" and tc.messages[1].content.startswith(
            "角色卡\n名字：小星（@xiaoxing）"
        )
        assert [m.content for m in tc.messages[2:]] == ["你好", "你好呀", "我喜欢喝茶"]
        assert tc.report["memory_ids"] == ["mem_1"]
        assert calls == [(user.id, cid, "我喜欢喝茶", rt.settings.memory_budget_tokens, 1)]
        names = [s["name"] for s in tc.report["sections"]]
        assert names == ["system", "memories", "persona", "history", "overhead"]

        async def broken(c, **kw):
            raise RuntimeError("memory store down")

        rt.memory_source = broken
        async with rt.db.read() as c:
            tc = await ctx.build_turn_context(
                c,
                settings=rt.settings,
                conv=conv,
                parent_id=ids[-1],
                model=demo_model(),
                principal=user,
                rt=rt,
            )
        assert tc.report["memory_ids"] == [] and "memory store down" in tc.report["memory_error"]
    finally:
        await rt.db.dispose()


async def test_project_instructions_and_system_prompt(db_url):
    rt = create_runtime(
        make_settings(db_url, system_prompt="You are chatmem."), db=Database(db_url)
    )
    try:
        user = await make_user(rt.db, "proj@example.com")
        pid = new_id("p")
        async with rt.db.write() as c:
            await c.execute(
                insert(t.projects).values(
                    id=pid,
                    user_id=user.id,
                    name="P",
                    instructions="Answer in French.",
                    created_at=now_ms(),
                    updated_at=now_ms(),
                )
            )
        cid = await make_conv(rt.db, user.id, project_id=pid)
        ids = await append_chain(rt.db, user.id, cid, [("user", "hi")])
        async with rt.db.read() as c:
            conv = await conv_row(rt.db, user.id, cid)
            tc = await ctx.build_turn_context(
                c,
                settings=rt.settings,
                conv=conv,
                parent_id=ids[-1],
                model=demo_model(),
                principal=user,
            )
        assert (
            tc.messages[0].content == "You are chatmem.\n\nProject instructions:\nAnswer in French."
        )
        assert tc.report["model"] == "demo" and tc.report["encoding"] == "cl100k_base"
        assert tc.report["compaction"] == {
            "needed": False,
            "inline": False,
            "reason": "below_trigger",
            "ran": False,
        }
    finally:
        await rt.db.dispose()

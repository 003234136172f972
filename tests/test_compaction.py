"""Compaction: triggers, cut points, path-aware summary chains, merging, the lease, the routes."""

import asyncio

import pytest

from chatmem.app import create_runtime
from chatmem.context import compaction as cp
from chatmem.context import lease
from chatmem.context import service as ctx
from chatmem.context import summary as sm
from chatmem.db.engine import Database
from chatmem.jobs.worker import Worker

from .conftest import make_settings
from .ctx_helpers import (
    append_chain,
    conv_row,
    demo_model,
    job_rows,
    make_conv,
    make_user,
    rounds,
    set_leaf,
)

# ── pure planning ───────────────────────────────────────────────────────────────────────────────


def tail(spec: str, tokens: int = 10):
    """'uauaus' → TailMsg list (u = user, a = assistant, s = streaming assistant)."""
    role = {"u": "user", "a": "assistant", "s": "assistant"}
    return [
        sm.TailMsg(f"m{i}", role[ch], "streaming" if ch == "s" else "complete", tokens)
        for i, ch in enumerate(spec)
    ]


def test_cut_snaps_to_user_messages_and_keeps_recent_rounds():
    t = tail("ua" * 10)
    assert sm.cut_index(t, 3) == 14 and t[14].role == "user"
    assert sm.cut_index(tail("uaaa" + "ua" * 3), 3) == 4  # several answers in one round
    assert sm.cut_index(tail("ua" * 2), 3) == 0  # fewer rounds than kept: nothing to do
    assert sm.cut_index(tail("aaaa"), 1) == 0  # no user message to cut before


def test_cut_never_crosses_a_streaming_row():
    t = tail("uaus" + "ua" * 5)
    assert sm.cut_index(t, 2) == 2  # the streaming answer's question starts the kept part
    assert sm.cut_index(tail("us" + "ua" * 5), 2) == 0


def test_cut_shrinks_kept_rounds_when_they_exceed_the_retention_budget():
    t = tail("ua" * 10, tokens=100)
    assert sm.cut_index(t, 6, retain_tokens=450) == 16  # only 2 rounds (400 tokens) fit
    assert sm.cut_index(t, 6, retain_tokens=10) == 18  # never fewer than one round


def test_decide_triggers():
    """Token-driven: the backlog's size decides, never a message count or the provider's usage
    (recall and the tail always fill the window); after a cut the newest ``retain`` tokens stay."""
    th = sm.Thresholds(keep_rounds=2, trigger_tokens=1000, limit=2000, retain_tokens=60)
    assert not sm.decide(tail("ua" * 40), th, estimated_tokens=999).needed  # 80 messages, fine
    d = sm.decide(tail("ua" * 40), th, estimated_tokens=1000)
    assert d.needed and not d.inline and d.reason == "tokens"
    assert d.cut == 80 - 6  # as many rounds as fit 60 tokens (10 per message): three
    roomy = sm.Thresholds(keep_rounds=2, trigger_tokens=1000, limit=2000, retain_tokens=500)
    assert sm.decide(tail("ua" * 40), roomy, estimated_tokens=1200).cut == 80 - 50
    tiny = sm.Thresholds(keep_rounds=2, trigger_tokens=1000, limit=2000, retain_tokens=5)
    assert sm.decide(tail("ua" * 40), tiny, estimated_tokens=1200).cut == 80 - 2  # ≥ one round
    assert sm.Thresholds(2, 1000, 2000).retain == 1000  # default: half the limit
    d = sm.decide(tail("ua" * 10), th, estimated_tokens=100, overflow=True)
    assert d.needed and d.inline and d.reason == "tail_exceeds_window" and d.cut == 14
    assert not sm.decide(tail("ua"), th, estimated_tokens=5000).needed  # nothing before it
    assert sm.decide(tail("ua" * 3), th, estimated_tokens=0, manual=True).cut == 4


def blk(bid, frm, parent, anchor, level=0, tokens=10, created=0):
    return {
        "id": bid,
        "from_message_id": frm,
        "from_parent_id": parent,
        "anchor_message_id": anchor,
        "level": level,
        "tokens": tokens,
        "text": bid,
        "created_at": created,
    }


def test_chain_needs_every_link_and_prefers_coarser_blocks():
    b1, b2 = blk("b1", "m0", None, "m3"), blk("b2", "m4", "m3", "m7")
    idx = sm.by_anchor([b1, b2])
    parents = {"m0": None, "m4": "m3"}
    assert [b["id"] for b in sm.chain_ending_at("m7", idx, parents)] == ["b1", "b2"]
    assert sm.chain_ending_at("m7", idx, {"m0": None, "m4": "m2"}) is None  # re-parented: gap
    assert sm.chain_ending_at("m7", idx, {"m4": "m3"}) is None  # first message deleted
    coarse = blk("c", "m0", None, "m7", level=1, created=5)
    idx = sm.by_anchor([b1, b2, coarse])
    assert [b["id"] for b in sm.chain_ending_at("m7", idx, parents)] == ["c"]


def test_merge_plan_and_prune_keep_blocks_other_branches_need():
    chain = [
        blk(f"b{i}", f"f{i}", f"a{i - 1}" if i else None, f"a{i}", tokens=100) for i in range(4)
    ]
    assert sm.merge_plan(chain, 1000) is None
    assert len(sm.merge_plan(chain, 150)) == 4  # even the newest block exceeds half: fold all
    fold = sm.merge_plan(chain, 250)
    assert [b["id"] for b in fold] == ["b0", "b1", "b2"]  # leaves 100 ≤ 125
    other = blk("x", "g", "a0", "z")  # another branch builds on b0
    coarse = blk("c", "f0", None, "a2", level=1)
    kept = {b["id"] for b in sm.prune_after_merge([*chain, other], fold, coarse)}
    assert kept == {"b0", "b3", "x", "c"}


# ── on the database ─────────────────────────────────────────────────────────────────────────────


@pytest.fixture
async def rt(db_url):
    # a 1,000-token trigger: these tests are about what compaction does, with small conversations
    runtime = create_runtime(
        make_settings(db_url, compaction_trigger_tokens=1000), db=Database(db_url)
    )
    yield runtime
    await runtime.db.dispose()


async def context_for(rt, user, cid, leaf=None, model=None, *, inline=True):
    """The context a turn would get; with ``inline``, compacting first as a turn does (outside
    the read transaction)."""
    model = model or demo_model()
    leaf = leaf or (await conv_row(rt.db, user.id, cid)).active_leaf_id
    res = None
    if inline:
        res = await ctx.ensure_compacted(
            rt, conversation_id=cid, user_id=user.id, parent_id=leaf, model=model
        )
    async with rt.db.read() as c:
        conv = await conv_row(rt.db, user.id, cid)
        t = await ctx.build_turn_context(
            c, settings=rt.settings, conv=conv, parent_id=leaf, model=model, principal=user, rt=rt
        )
    ctx.record_compaction(t.report, res)
    return t


async def test_compaction_job_triggers_on_long_tail_only(rt):
    """A 15-round tail (~1,300 tokens) is over the 1,000-token trigger, a 5-round one is not; the
    cut keeps the newest rounds that fit 55% of the trigger (six here)."""
    u = await make_user(rt.db, "jobs@example.com")
    short = await make_conv(rt.db, u.id)
    await append_chain(rt.db, u.id, short, rounds(5))
    long = await make_conv(rt.db, u.id)
    ids = await append_chain(rt.db, u.id, long, rounds(15))
    async with rt.db.write() as c:
        assert await ctx.enqueue_compaction(c, short)
        assert await ctx.enqueue_compaction(c, long)
        assert await ctx.enqueue_compaction(c, long) is None  # deduplicated while queued
    w = Worker(rt, kinds=["compaction"])
    while await w.run_once():
        pass
    assert all(j["status"] == "done" for j in await job_rows(rt.db, "compaction"))
    assert (await conv_row(rt.db, u.id, short)).summary_blocks == []
    conv = await conv_row(rt.db, u.id, long)
    [b] = conv.summary_blocks
    keep = rt.settings.keep_recent_rounds
    assert b["from_message_id"] == ids[0] and b["from_parent_id"] is None
    assert b["anchor_message_id"] == ids[-2 * keep - 1]  # the answer before the kept rounds
    assert b["level"] == 0 and b["tokens"] > 0 and "Question 0" in b["text"]
    assert conv.summary == b["text"]  # the rendered summary of the active path (seed 000)
    t = await context_for(rt, u, long)
    assert t.report["summary_block_ids"] == [b["id"]]
    assert t.report["message_ids"] == ids[-2 * keep :]
    assert t.messages[1].content.startswith("<conversation-summary>")


async def test_summary_applies_only_on_paths_through_its_anchor(rt):
    u = await make_user(rt.db, "branch@example.com")
    cid = await make_conv(rt.db, u.id)
    ids = await append_chain(rt.db, u.id, cid, rounds(15))
    res = await cp.compact(
        rt.db,
        conversation_id=cid,
        user_id=u.id,
        settings=rt.settings,
        model=demo_model(),
        summarizer=cp.ExtractiveSummarizer(ctx.counter_for("cl100k_base")),
    )
    assert res.compacted and res.blocks_added == 1
    anchor = res.chain[-1]["anchor_message_id"]
    # A branch made before the summarised range ended (an edit of round 2's question).
    early = await append_chain(
        rt.db,
        u.id,
        cid,
        [("user", "edited question 2"), ("assistant", "new answer 2")],
        parent=ids[3],
    )
    t = await context_for(rt, u, cid, leaf=early[-1])
    assert t.report["summary_block_ids"] == []
    assert t.report["message_ids"] == ids[:4] + early  # its own path, not the other branch
    # A branch made after the anchor keeps the summary.
    late = await append_chain(
        rt.db, u.id, cid, [("user", "late branch"), ("assistant", "ok")], parent=ids[-3]
    )
    t = await context_for(rt, u, cid, leaf=late[-1])
    assert t.report["summary_block_ids"] == [res.chain[-1]["id"]]
    assert anchor in ids and t.report["message_ids"][-2:] == late
    # Compacting the early branch adds its own chain; both branches keep theirs.
    await set_leaf(rt.db, cid, early[-1])
    more = await append_chain(rt.db, u.id, cid, rounds(12, start=100))
    res2 = await cp.compact(
        rt.db,
        conversation_id=cid,
        user_id=u.id,
        settings=rt.settings,
        model=demo_model(),
        summarizer=cp.ExtractiveSummarizer(ctx.counter_for("cl100k_base")),
    )
    assert res2.compacted
    t_early = await context_for(rt, u, cid, leaf=more[-1])
    t_late = await context_for(rt, u, cid, leaf=late[-1])
    assert t_early.report["summary_block_ids"] == [b["id"] for b in res2.chain]
    assert t_late.report["summary_block_ids"] == [res.chain[-1]["id"]]
    assert len((await conv_row(rt.db, u.id, cid)).summary_blocks) == 2


async def test_two_replicas_racing_produce_exactly_one_block(db_url, rt):
    u = await make_user(rt.db, "race@example.com")
    cid = await make_conv(rt.db, u.id)
    await append_chain(rt.db, u.id, cid, rounds(15))
    entered = asyncio.Event()
    gate = asyncio.Event()

    class Slow(cp.ExtractiveSummarizer):
        async def summarize(self, items, max_tokens):
            entered.set()
            await gate.wait()
            return await super().summarize(items, max_tokens)

    other = Database(db_url)  # a second replica: its own engine and connections
    try:
        counter = ctx.counter_for("cl100k_base")
        first = asyncio.create_task(
            cp.compact(
                rt.db,
                conversation_id=cid,
                user_id=u.id,
                settings=rt.settings,
                model=demo_model(),
                summarizer=Slow(counter),
            )
        )
        await entered.wait()  # replica 1 holds the lease and is summarising
        second = await cp.compact(
            other,
            conversation_id=cid,
            user_id=u.id,
            settings=rt.settings,
            model=demo_model(),
            summarizer=Slow(counter),
        )
        gate.set()
        first = await first
        # and both at once, with nothing left to do
        again = await asyncio.gather(
            *[
                cp.compact(
                    d,
                    conversation_id=cid,
                    user_id=u.id,
                    settings=rt.settings,
                    model=demo_model(),
                    summarizer=cp.ExtractiveSummarizer(counter),
                )
                for d in (rt.db, other)
            ]
        )
    finally:
        await other.dispose()
    assert first.status == "compacted" and first.blocks_added == 1
    assert second.status == "busy"
    assert {r.status for r in again} <= {"busy", "skipped"}
    assert len((await conv_row(rt.db, u.id, cid)).summary_blocks) == 1
    assert await lease.holder(rt.db, cid) is None  # released by its owner


async def test_lease_acquire_release_and_expiry(rt):
    u = await make_user(rt.db, "lease@example.com")
    cid = await make_conv(rt.db, u.id)
    tok = await lease.acquire(rt.db, cid, 60_000)
    assert tok and await lease.acquire(rt.db, cid, 60_000) is None
    assert not await lease.release(rt.db, cid, "not-the-owner")
    assert (await lease.holder(rt.db, cid))["owner_token"] == tok
    assert await lease.release(rt.db, cid, tok)
    stale = await lease.acquire(rt.db, cid, -1)  # already expired
    fresh = await lease.acquire(rt.db, cid, 60_000)
    assert stale and fresh and fresh != stale
    assert not await lease.release(rt.db, cid, stale)  # the old owner cannot free the new lease
    assert await lease.release(rt.db, cid, fresh)


async def test_blocks_merge_into_coarser_ones_within_budget(rt):
    u = await make_user(rt.db, "merge@example.com")
    cid = await make_conv(rt.db, u.id)
    model = demo_model(window=1024, max_output=128)
    summ = cp.ExtractiveSummarizer(ctx.counter_for("cl100k_base"))
    for k in range(8):
        await append_chain(rt.db, u.id, cid, rounds(10, start=k * 10, words=12))
        await cp.compact(
            rt.db,
            conversation_id=cid,
            user_id=u.id,
            settings=rt.settings,
            model=model,
            summarizer=summ,
        )
    conv = await conv_row(rt.db, u.id, cid)
    pol = cp.policy_for(rt.settings, model)
    t = await context_for(rt, u, cid, model=model)
    by_id = {b["id"]: b for b in conv.summary_blocks}
    chain = [by_id[i] for i in t.report["summary_block_ids"]]
    assert all(b["text"] for b in conv.summary_blocks)
    assert chain and max(b["level"] for b in chain) >= 1
    assert sum(b["tokens"] for b in chain) <= pol.merge_budget
    assert t.report["total_tokens"] <= pol.limit
    assert "Question 0" in chain[0]["text"] or chain[0]["level"] >= 1


async def test_inline_compaction_before_the_model_call(rt):
    u = await make_user(rt.db, "inline@example.com")
    cid = await make_conv(rt.db, u.id)
    ids = await append_chain(rt.db, u.id, cid, rounds(60, words=20))
    model = demo_model(window=2048, max_output=256)
    t = await context_for(rt, u, cid, model=model, inline=False)
    assert t.report["compaction"]["needed"] and t.report["compaction"]["inline"]
    assert not t.report["compaction"]["ran"] and t.report["dropped_message_count"] > 0
    assert ctx.compaction_event(t.report) is None
    t = await context_for(rt, u, cid, model=model)
    assert t.report["compaction"]["ran"] and t.report["summary_block_ids"]
    ev = ctx.compaction_event(t.report)
    assert ev["mode"] == "inline" and ev["blocks_added"] >= 1 and ev["summarized_messages"] > 0
    assert t.report["message_ids"][-1] == ids[-1]
    assert t.report["total_tokens"] <= 2048 - 256
    again = await context_for(rt, u, cid, model=model)
    assert not again.report["compaction"]["ran"]  # the backlog is gone


async def test_manual_compaction_refuses_while_streaming(rt):
    u = await make_user(rt.db, "stream@example.com")
    cid = await make_conv(rt.db, u.id)
    await append_chain(
        rt.db, u.id, cid, [*rounds(4), ("user", "q"), ("assistant", "")], status_last="streaming"
    )
    from chatmem.errors import Conflict

    with pytest.raises(Conflict) as e:
        await cp.compact(
            rt.db,
            conversation_id=cid,
            user_id=u.id,
            settings=rt.settings,
            model=demo_model(),
            summarizer=cp.ExtractiveSummarizer(ctx.counter_for("cl100k_base")),
            manual=True,
        )
    assert e.value.code == "turn_streaming"
    assert await lease.holder(rt.db, cid) is None


# ── routes ──────────────────────────────────────────────────────────────────────────────────────


async def test_compact_and_context_routes(new_user):
    a = await new_user()
    b = await new_user()
    cid = (await a.client.post("/api/conversations", json={})).json()["id"]
    for i in range(5):
        await a.client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": f"my favourite number is {i}", "generate": False},
        )
        await a.client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": f"noted {i}", "role": "assistant"},
        )
    r = await a.client.get(f"/api/conversations/{cid}/context")
    assert r.status_code == 200
    rep = r.json()["report"]
    assert len(rep["message_ids"]) == 10 and rep["total_tokens"] > 0 and r.json()["preview"]
    assert {s["name"] for s in rep["sections"]} >= {"system", "history"}
    r = await a.client.post(f"/api/conversations/{cid}/compact")
    assert r.status_code == 200, r.text
    body = r.json()
    assert (
        body["compacted"] and body["summarized_messages"] == 8 and len(body["summary_blocks"]) == 1
    )
    assert "favourite number is 0" in body["summary"]
    r = await a.client.get(f"/api/conversations/{cid}/context", params={"include_messages": True})
    rep = r.json()["report"]
    assert len(rep["message_ids"]) == 2 and rep["summary_block_ids"]
    assert "<conversation-summary>" in r.json()["messages"][1]["content"]
    r = await a.client.post(f"/api/conversations/{cid}/compact")
    assert r.status_code == 200 and not r.json()["compacted"]  # only the latest round is left
    # another user's conversation is not found; nothing is written
    for resp in (
        await b.client.get(f"/api/conversations/{cid}/context"),
        await b.client.post(f"/api/conversations/{cid}/compact"),
    ):
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"
    r = await a.client.get(f"/api/conversations/{cid}/context", params={"message_id": "msg_nope"})
    assert r.status_code == 404


async def test_a_callers_own_context_metadata_is_no_report(new_user):
    """A log-mode message's metadata is the caller's: a ``context`` key that is not a report is
    "no context report" (404), not a 500; one shaped like a report is served as stored."""
    a = await new_user()
    cid = (await a.client.post("/api/conversations", json={})).json()["id"]
    for meta, status in (
        ({"context": "mine"}, 404),
        ({"context": [1]}, 404),
        ({"context": {"sections": 5}}, 404),
        ({"context": {"total_tokens": 7, "note": "mine"}}, 404),
        ({"context": {"sections": [], "note": "mine"}}, 200),
    ):
        body = {"content": "hi", "generate": False, "metadata": meta}
        mid = (await a.client.post(f"/api/conversations/{cid}/messages", json=body)).json()["id"]
        r = await a.client.get(f"/api/conversations/{cid}/context", params={"message_id": mid})
        assert r.status_code == status, (meta, r.text)
        if status == 404:
            assert r.json()["error"]["code"] == "no_context_report"
        else:
            assert r.json()["report"]["note"] == "mine"


async def test_generated_turn_stores_its_report_and_queues_compaction(new_user, app):
    a = await new_user()
    cid = (await a.client.post("/api/conversations", json={})).json()["id"]
    r = await a.client.post(f"/api/conversations/{cid}/messages", json={"content": "hello there"})
    assert r.status_code in (201, 202), r.text
    mid = r.json().get("assistant_message_id") or r.json().get("assistant", {}).get("id")
    for _ in range(400):
        msgs = (await a.client.get(f"/api/conversations/{cid}/messages")).json()["items"]
        if msgs and msgs[-1]["role"] == "assistant" and msgs[-1]["status"] != "streaming":
            break
        await asyncio.sleep(0.05)
    last = msgs[-1]
    mid = mid or last["id"]
    rep = last["metadata"]["context"]
    assert rep["message_ids"][-1] == msgs[-2]["id"] and rep["total_tokens"] > 0
    r = await a.client.get(f"/api/conversations/{cid}/context", params={"message_id": last["id"]})
    assert r.status_code == 200 and r.json()["report"] == rep
    db = app.state.runtime.db
    for _ in range(400):  # the in-process worker runs the after-turn compaction check
        jobs = await job_rows(db, "compaction")
        if jobs and jobs[0]["status"] == "done":
            break
        await asyncio.sleep(0.05)
    assert jobs and jobs[0]["payload"] == {"conversation_id": cid} and jobs[0]["status"] == "done"

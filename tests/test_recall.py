"""Recall: pure ranking/packing properties, and end to end on SQLite and PostgreSQL — a fact said
hundreds of turns ago comes back, never from another branch, another user or a workspace, never
twice, with its neighbouring turn and its date; the memory-scope option reaches the user's other
conversations."""

from __future__ import annotations

import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from chatmem.app import create_runtime
from chatmem.auth.models import Principal
from chatmem.context import assemble as asm
from chatmem.context import recall as rc
from chatmem.context import recall_source as rs
from chatmem.context import service as ctx
from chatmem.context.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, counter_for
from chatmem.conversations.paths import PathCache
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.search import df_memo, rank
from chatmem.search.df_memo import CountMemo
from chatmem.workspaces import service as ws_service
from chatmem.workspaces.service import WorkspaceIn

from .conftest import make_settings
from .ctx_helpers import append_chain, conv_row, demo_model, make_conv, make_user

C = counter_for("cl100k_base")
DAY = 86_400_000


def total(msgs):
    return REQUEST_OVERHEAD + sum(C.count(m.content) + MESSAGE_OVERHEAD for m in msgs)


# ── pure ────────────────────────────────────────────────────────────────────────────────────────


@given(st.integers(min_value=-DAY, max_value=253_402_300_799_999))
def test_day_is_the_utc_calendar_day(ms):
    """``day``'s integer arithmetic names the day ``datetime`` does (what it replaced)."""
    import datetime as dt

    want = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d") if ms > 0 else ""
    assert rc.day(ms) == want


def test_fuse_rewards_agreement_and_breaks_ties_by_recency():
    fused = rc.fuse(["a", "b", "c"], ["c", "a"])
    assert [i for i, _ in fused] == ["a", "c", "b"]
    assert [i for i, _ in rc.fuse(["m1"], ["m2"])] == ["m2", "m1"]  # equal: the newer id first


@given(st.lists(st.lists(st.sampled_from(["a", "ab", "b", "m1", "m10", "m2"]), unique=True)))
def test_fuse_is_the_score_order_with_ties_by_recency(lists):
    """``fuse`` sorts by score and breaks only ties by ``_desc`` (the newer id first): the same
    order as sorting everything by (score, ``_desc``)."""
    fused = rc.fuse(*lists)
    assert fused == sorted(fused, key=lambda kv: (-kv[1], rc._desc(kv[0])))
    assert {i for i, _ in fused} == {i for lst in lists for i in lst}


def test_keep_relevant_and_group_use_each_message_once():
    assert rc.keep_relevant([("a", 10.0), ("b", 2.0), ("c", 0.5)], 0.1) == ["a", "b"]
    msgs = {
        i: rc.Recalled(i, "user" if n % 2 == 0 else "assistant", i, n)
        for n, i in enumerate(["q1", "a1", "q2", "a2"])
    }
    groups = rc.group(
        [("a1", 2.0), ("q1", 1.5), ("q2", 1.0)], msgs, {"a1": "q1", "q1": "a1", "q2": "a2"}
    )
    assert [g.ids for g in groups] == [("q1", "a1"), ("q2", "a2")]  # q1 already in a1's group


def test_pack_skips_verbatim_messages_and_renders_dated_oldest_first():
    msgs = {
        "old": rc.Recalled("old", "user", "I adopted a cat named Miso", 1_700_000_000_000),
        "ans": rc.Recalled("ans", "assistant", "Miso is cute", 1_700_000_060_000),
        "new": rc.Recalled("new", "user", "Miso knocked over a vase", 1_710_000_000_000),
    }
    groups = rc.group([("new", 2.0), ("old", 1.0)], msgs, {"old": "ans", "new": None})
    kw = dict(header=rc.HEADER, item_tokens=100, count=C.count, truncate=C.truncate)
    p = rc.pack(groups, budget=500, exclude={"new"}, **kw)
    assert p.ids == ["old", "ans"] and "Miso knocked" not in p.text
    assert p.text.index("[2023-11-14]\nUser: I adopted") < p.text.index("Assistant: Miso is cute")
    assert p.text.count("[2023-11-14]") == 1  # one date line per day, not per message
    assert p.tokens == C.count(p.text) <= 500
    assert rc.pack(groups, budget=10, exclude=set(), **kw).ids == []
    both = rc.pack(groups, budget=500, exclude=set(), **kw)
    assert both.text.index("[2023-11-14]") < both.text.index("[2024-03-09]\nUser: Miso knocked")


def test_distinctive_counts_words_said_nowhere_else():
    docs = {
        "fact": "I'm learning Swahili with an app every morning.",
        "chat": "It has been raining all week, every morning grey.",
        "chat2": "Raining again, grey all week, umbrellas out.",
    }
    got = rank.distinctive(docs, {"t1": "The app crashed this week.", "fact": docs["fact"]})
    # fact: "learning", "swahili" ("app" is in the background, "morning" in chat); chat2:
    # "umbrellas"; chat: nothing of its own; stop words never count
    assert got["fact"] == 2 and got["chat2"] == 1 and got["chat"] == 0
    assert rank.distinctive({}, {"x": "anything"}) == {}


def test_sampled_df_scales_what_the_sample_shows():
    sample = ["I think so", "I am here", "so it goes", "nothing", "I do"]
    got = rank.sampled_df(sample, ["i", "so", "goes", "zebra"], 1000)
    # "i" in 3 of 5 texts → 600 of 1000; "so" in 2 → 400; "goes" once: too few to tell
    assert got == {"i": 600, "so": 400}
    assert rank.sampled_df(sample, ["i"], 2) == {"i": 3}  # never fewer than seen
    assert rank.sampled_df([], ["i"], 1000) == {} == rank.sampled_df(sample, [], 1000)


def test_longer_words_are_asked_in_their_forms():
    from chatmem.search import terms as tm

    assert tm.stemmed("volunteering") == tm.stemmed("volunteer") == "volunteer~"
    assert set(tm.forms("volunteer~")) == {"volunteer", "volunteers", "volunteered", "volunteering"}
    assert {"studies", "studied", "studying"} < set(tm.forms(tm.stemmed("studying")))
    assert {"planned", "planning"} < set(tm.forms("plan~"))
    assert [tm.stemmed(w) for w in ("lena", "about", "café", "2024")] == [
        "lena",
        "about",
        "café",
        "2024",
    ]
    text = "I started volunteering; volunteers volunteer. Involunteer!"
    assert tm.count("volunteer~", text) == 3 and tm.occurs("volunteer~", text)
    assert tm.count("volunteer", text) == 1 and not tm.occurs("volunteer", "volunteers")
    assert not tm.occurs("volunteer~", "volunteerism")  # forms, never a prefix scan
    assert tm.fts5_match(["plan~", "omar"], []) == (
        '{body cjk} : (("plan" OR "plans" OR "planed" OR "planing" OR "planned" OR "planning")'
        ' OR "omar")'
    )
    assert tm.tsquery(["volunteer~", "omar"]) == (
        "('volunteer' | 'volunteers' | 'volunteered' | 'volunteering') | 'omar'"
    )
    assert not tm.searchable("a~b") and not tm.searchable("~") and tm.searchable("abc~")
    scored = rank.bm25({"a": text, "b": "volunteer once"}, ["volunteer~"], {}, 10)
    assert [x.id for x in scored] == ["a", "b"]  # three matches beat one


def test_fill_groups_follow_the_budget_and_the_turn_length():
    short = [asm.HistoryItem(f"m{i}", "user", "word " * 20) for i in range(10)]
    long = [asm.HistoryItem(f"m{i}", "user", "word " * 400) for i in range(10)]
    assert rs.fill_groups(40, 4000, short, C.count) > 100  # ~26 tokens a line
    assert rs.fill_groups(40, 4000, long, C.count) == 40  # never under the configured floor
    assert rs.fill_groups(40, 10**6, short, C.count) == rs.FILL_GROUPS_MAX


def test_top_up_follows_the_real_hits_and_scores_below_them():
    ranked = [("a", 0.03), ("b", 0.02)]
    out = rc.top_up(ranked, ["b", "c", "d", "e"], limit=4)
    assert [i for i, _ in out] == ["a", "b", "c", "d"]  # b not twice, at most 4
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True) and scores[2] < 0.02
    assert rc.top_up(ranked, ["c"], limit=2) == ranked  # full: nothing added
    assert [i for i, _ in rc.top_up([], ["x", "y"], limit=5)] == ["x", "y"]


def _inputs():
    hist = st.lists(st.integers(0, 60), min_size=1, max_size=60)
    return st.tuples(hist, st.lists(st.integers(0, 59), max_size=20), st.integers(200, 3000))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_inputs())
def test_assembly_with_recall_never_over_budget_never_duplicated(data):
    sizes, hit_positions, window = data
    history = [
        asm.HistoryItem(
            f"m{i:03d}",
            "user" if i % 2 == 0 else "assistant",
            f"turn {i} " + "word " * n,
            1_700_000_000_000 + i * DAY,
        )
        for i, n in enumerate(sizes)
    ]
    by_id = {h.id: rc.Recalled(h.id, h.role, h.text, h.created_at) for h in history}
    hits = [(history[p].id, 1.0 / (k + 1)) for k, p in enumerate(hit_positions) if p < len(history)]
    neighbours = {
        h.id: history[i + 1].id if i + 1 < len(history) else None for i, h in enumerate(history)
    }
    groups = rc.group(hits, by_id, neighbours)
    budgets = asm.Budgets(
        window=window, reserved_output=100, recall_tokens=window // 2, recall_item_tokens=60
    )
    out = asm.assemble(
        asm.ContextInput(
            system_prompt="SYS", history=history, recall=groups, now_ms=1_800_000_000_000
        ),
        budgets,
        C.count,
        C.truncate,
    )
    r = out.report
    assert r["total_tokens"] == total(out.messages) <= window - 100
    assert not set(r["recall_message_ids"]) & set(r["message_ids"])
    assert r["message_ids"][-1] == history[-1].id
    assert set(r["recall_message_ids"]) <= set(by_id)
    assert sum(s["tokens"] for s in r["sections"]) == r["total_tokens"]


def test_recall_takes_only_what_hits_need_and_the_tail_the_rest():
    history = [
        asm.HistoryItem(
            f"m{i:03d}",
            "user" if i % 2 == 0 else "assistant",
            f"turn {i} " + "filler words here " * 6,
        )
        for i in range(200)
    ]
    by_id = {h.id: rc.Recalled(h.id, h.role, h.text, 0) for h in history}
    groups = rc.group([("m004", 1.0)], by_id, {"m004": "m005"})
    out = asm.assemble(
        asm.ContextInput(system_prompt="SYS", history=history, recall=groups),
        asm.Budgets(window=4096, reserved_output=256, recall_tokens=2000),
        C.count,
        C.truncate,
    )
    sec = next(s for s in out.report["sections"] if s["name"] == "recall")
    assert out.report["recall_message_ids"] == ["m004", "m005"] and sec["tokens"] < 200
    assert out.report["total_tokens"] > 4096 - 256 - 40  # the tail used the rest


# ── end to end, both databases ──────────────────────────────────────────────────────────────────


async def _runtime(db_url, **kw):
    return create_runtime(make_settings(db_url, **kw), db=Database(db_url))


def _filler(n: int, start: int = 0) -> list[tuple[str, str]]:
    out = []
    for i in range(start, start + n):
        out.append(("user", f"Small talk number {i} about the weather and the weekend plans."))
        out.append(("assistant", f"Reply {i}: sounds nice, hope the weather holds for you."))
    return out


async def _context(rt, user, cid, leaf, model=None):
    async with rt.db.read() as c:
        conv = await conv_row(rt.db, user.id, cid)
        return await ctx.build_turn_context(
            c,
            settings=rt.settings,
            conv=conv,
            parent_id=leaf,
            model=model or demo_model(1024, 128),
            principal=user,
            rt=rt,
        )


async def test_old_fact_is_recalled_with_its_answer_and_date(db_url, monkeypatch):
    from chatmem.context import recall_source

    threads: list[str] = []
    real_rank = recall_source._lexical_rank

    def rank_spy(*args):
        threads.append(threading.current_thread().name)
        return real_rank(*args)

    monkeypatch.setattr(recall_source, "_lexical_rank", rank_spy)
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "recall@example.com")
        cid = await make_conv(rt.db, u.id)
        ids = await append_chain(
            rt.db,
            u.id,
            cid,
            [
                ("user", "My sister Lena works as a glassblower in Murano."),
                ("assistant", "A glassblower! That must be beautiful work."),
            ],
        )
        async with rt.db.write() as c:  # the fact was said on a day of its own
            await c.execute(
                update(t.messages)
                .where(t.messages.c.id == ids[0])
                .values(created_at=1_700_000_000_000)
            )
        await append_chain(rt.db, u.id, cid, _filler(150))
        [q] = await append_chain(rt.db, u.id, cid, [("user", "What does Lena do?")])
        tc = await _context(rt, u, cid, q)
        rep = tc.report
        assert ids[0] not in rep["message_ids"], rep["recall"]  # far outside the verbatim tail
        assert rep["recall_message_ids"], rep["recall"]
        assert rep["recall_message_ids"][:2] == ids  # the hit and its answer
        system = tc.messages[0].content
        assert "[2023-11-14]\nUser: My sister Lena works as a glassblower" in system
        assert rep["total_tokens"] <= 1024 - 128
        # a short question also weighs the turn before it, lower; hits must still match "lena"
        assert rep["recall"]["terms"]["lena"] == 1.0
        assert set(rep["recall"]["terms"].values()) == {1.0, 0.35}
        # BM25 over the candidates ran on the text pool (cpu.run_text), not the event loop
        assert threads and all(name.startswith("chatmem-text") for name in threads)
    finally:
        await rt.db.dispose()


async def test_recall_never_leaves_the_answered_branch_or_the_user(db_url):
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "branch@example.com")
        v = await make_user(rt.db, "other@example.com")
        cid = await make_conv(rt.db, u.id)
        [root] = await append_chain(rt.db, u.id, cid, [("user", "Hello there")])
        # an abandoned branch that mentions the kiwi allergy, and the branch being answered
        await append_chain(
            rt.db, u.id, cid, [("assistant", "You said you hate kiwi allergy pills")], parent=root
        )
        await append_chain(rt.db, u.id, cid, [("assistant", "Hi!")], parent=root)
        await append_chain(rt.db, u.id, cid, _filler(120))
        vc = await make_conv(rt.db, v.id)
        await append_chain(rt.db, v.id, vc, [("user", "I have a kiwi allergy too")])
        [q] = await append_chain(rt.db, u.id, cid, [("user", "Tell me about my kiwi allergy")])
        rep = (await _context(rt, u, cid, q)).report
        # nothing from the other branch, nothing of v's ("kiwi allergy" matches only those; the
        # question's function words may still bring back small talk from this branch)
        async with rt.db.read() as c:
            rows = (
                await c.execute(
                    t.messages.select().where(t.messages.c.id.in_(rep["recall_message_ids"]))
                )
            ).all()
        assert all(r.conversation_id == cid and "kiwi" not in r.search_text for r in rows)
    finally:
        await rt.db.dispose()


async def test_memory_scope_recalls_other_conversations_but_never_workspace_ones(db_url):
    rt = await _runtime(db_url, recall_scope="memory_scope")
    try:
        u = await make_user(rt.db, "scope@example.com")
        older = await make_conv(rt.db, u.id)
        [fact, _] = await append_chain(
            rt.db,
            u.id,
            older,
            [
                ("user", "Our wifi password at the cabin is trout-lantern-42."),
                ("assistant", "Noted."),
            ],
        )
        # a workspace of u's own (workspace rows are seen by members only)
        team = await ws_service.create(rt.db, u, WorkspaceIn(name="T"))
        shared = await make_conv(rt.db, u.id, workspace_id=team["id"])
        [secret] = await append_chain(rt.db, u.id, shared, [("user", "cabin wifi is trout-ws")])
        cid = await make_conv(rt.db, u.id)
        await append_chain(rt.db, u.id, cid, _filler(120))
        [q] = await append_chain(rt.db, u.id, cid, [("user", "What's the cabin wifi password?")])
        rep = (await _context(rt, u, cid, q)).report
        assert fact in rep["recall_message_ids"] and secret not in rep["recall_message_ids"]
        assert rep["recall"]["scope"] == "memory_scope"
    finally:
        await rt.db.dispose()


async def test_paraphrased_question_is_topped_up_by_its_function_words(db_url):
    """ "Which language am I studying?" shares no content word with "I'm learning Swahili": the
    full-text hits find nothing, and the turns sharing the question's function words fill the
    recall budget instead (off with ``recall_fill``)."""
    for fill in (True, False):
        rt = await _runtime(db_url, recall_fill=fill)
        try:
            u = await make_user(rt.db, f"fill{fill}@example.com")
            cid = await make_conv(rt.db, u.id)
            [fact, _] = await append_chain(
                rt.db,
                u.id,
                cid,
                [("user", "I am learning Swahili with an app"), ("assistant", "Nice!")],
            )
            await append_chain(rt.db, u.id, cid, _filler(150))
            [q] = await append_chain(rt.db, u.id, cid, [("user", "Which language am I studying?")])
            rep = (await _context(rt, u, cid, q)).report
            assert fact not in rep["message_ids"]  # far outside the verbatim tail
            assert (fact in rep["recall_message_ids"]) is fill, rep["recall"]
            assert ("fill_terms" in rep["recall"]) is fill
            if fill:
                assert set(rep["recall"]["fill_terms"]) == {"which", "am", "i"}
            assert rep["total_tokens"] <= 1024 - 128
        finally:
            await rt.db.dispose()


async def test_only_the_questions_own_words_are_always_counted(db_url, monkeypatch):
    """Counting a word reads up to ``DF_CAP`` index entries: the function words and the turn
    before's words are estimated from the verbatim history when it holds them, and the turn
    before's other words are counted only up to ``WEAK_DF_CAP``; the question's own words are
    counted exactly unless they are everywhere — and recall still finds what they say."""
    from chatmem.search import index

    asked: list[tuple[list[str], dict]] = []
    real = index.frequencies

    async def spy(c, scope, terms, **kw):
        asked.append((list(terms), dict(kw.get("caps") or {})))
        return await real(c, scope, terms, **kw)

    monkeypatch.setattr(index, "frequencies", spy)
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "counted@example.com")
        cid = await make_conv(rt.db, u.id)
        [fact, _] = await append_chain(
            rt.db, u.id, cid, [("user", "Hail in the forecast"), ("assistant", "Oh no")]
        )
        await append_chain(rt.db, u.id, cid, _filler(150))
        turns = [("user", "I planted basil on the balcony."), ("assistant", "Basil loves sun.")]
        await append_chain(rt.db, u.id, cid, turns)
        [q] = await append_chain(rt.db, u.id, cid, [("user", "And the weather forecast?")])
        rep = (await _context(rt, u, cid, q)).report
        assert rep["recall"]["terms"]["basil"] == rs.FOLLOW_UP_WEIGHT  # a follow-up
        [(terms, caps)] = asked
        assert "forecast~" in terms and "forecast~" not in caps  # its own word: exact
        assert "weather~" not in terms  # … unless it is in every message
        assert "the" not in terms and "and" not in terms  # the history tells these
        assert caps["basil"] == caps["balcony"] == rs.WEAK_DF_CAP
        assert fact in rep["recall_message_ids"]
    finally:
        await rt.db.dispose()


def test_count_memo_keeps_common_counts_while_they_are_good():
    """A count is reused while the scope changed by at most 10 % of it and for at most
    ``MAX_AGE_S``; a rare word's is never kept; a count that stopped at its cap answers only
    requests capped no higher."""
    now = [0.0]
    memo = CountMemo(max_entries=3, clock=lambda: now[0])
    memo.put("c", "garden", 40, cap=500, size=1000)
    memo.put("c", "lena", 3, cap=500, size=1000)  # rare: counting it is cheap, it moves most
    assert memo.get("c", "lena", cap=500, size=1000) is None
    assert memo.get("c", "garden", cap=500, size=1004) == 40
    assert memo.get("c", "garden", cap=30, size=1004) == 30  # the cap asked for
    assert memo.get("other", "garden", cap=500, size=1000) is None  # per scope
    assert memo.get("c", "garden", cap=500, size=1005) is None  # 5 > 10 % of 40: dropped
    assert memo.get("c", "garden", cap=500, size=1000) is None
    memo.put("c", "the", 100, cap=100, size=1000)  # "at least 100"
    assert memo.get("c", "the", cap=100, size=1000) == 100
    assert memo.get("c", "the", cap=50, size=1000) == 50
    assert memo.get("c", "the", cap=500, size=1000) is None  # says nothing beyond 100
    now[0] = df_memo.MAX_AGE_S + 1
    assert memo.get("c", "the", cap=100, size=1000) is None  # too old: edits change counts
    for i in range(5):
        memo.put("c", f"w{i}", 50, cap=500, size=1000)
    assert [memo.get("c", f"w{i}", cap=500, size=1000) for i in range(5)] == [
        None,
        None,
        50,
        50,
        50,
    ]


async def test_a_common_words_count_is_made_once_while_the_conversation_barely_changes(
    db_url, monkeypatch
):
    """The next question asking a common word reuses its count (``search/df_memo.py``); a rare
    word is counted each turn; once the conversation grew by more than 10 % of the count, it is
    counted again — and recall finds the same. A word counted in this turn and in no more
    messages than its candidates are is read unranked (``match_each(whole=…)``)."""
    from chatmem.search import index

    asked: list[list[str]] = []
    real = index.frequencies

    async def spy(c, scope, terms, **kw):
        asked.append(list(terms))
        return await real(c, scope, terms, **kw)

    monkeypatch.setattr(index, "frequencies", spy)
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "memo@example.com")
        cid = await make_conv(rt.db, u.id)
        fact = [("user", "Lena planted tulips in the community garden."), ("assistant", "Lovely!")]
        [hit, _] = await append_chain(rt.db, u.id, cid, fact)
        turns = _filler(150)
        for i in range(0, 300, 20):  # "garden" in 15 more messages, 5 % of the history
            turns[i] = ("user", f"The garden looks lush today, round {i}.")
        *_, leaf = await append_chain(rt.db, u.id, cid, turns)

        async def ask(text: str) -> dict:
            [q] = await append_chain(rt.db, u.id, cid, [("user", text)], parent=leaf)
            return (await _context(rt, u, cid, q)).report

        whole: list[set[str]] = []
        real_each = index.match_each

        async def each_spy(c, scope, terms, **kw):
            whole.append(set(kw.get("whole") or ()))
            return await real_each(c, scope, terms, **kw)

        monkeypatch.setattr(index, "match_each", each_spy)
        first = await ask("What did Lena plant in the garden?")
        # counted just now and in no more messages than asked for: read unranked
        assert "lena" in whole[0] and "garden~" in whole[0]
        whole.clear()
        second = await ask("Which flowers did Lena grow in the garden?")
        assert "garden~" in asked[0] and "garden~" not in asked[1]  # counted once
        assert "lena" in asked[0] and "lena" in asked[1]  # a rare word: each turn
        assert hit in first["recall_message_ids"] and hit in second["recall_message_ids"]
        assert whole and all("garden~" not in w for w in whole)  # a kept count: ranked
        await append_chain(rt.db, u.id, cid, _filler(2), parent=leaf)  # +4 > 10 % of 17
        third = await ask("Is Lena still working in the garden?")
        assert "garden~" in asked[2]
        assert hit in third["recall_message_ids"]
    finally:
        await rt.db.dispose()


async def test_a_question_word_finds_its_other_forms(db_url):
    """ "Where did you say you volunteer?" finds "I started volunteering at the animal shelter":
    the question's longer words are asked in their usual forms, on both databases."""
    rt = await _runtime(db_url, recall_fill=False)
    try:
        u = await make_user(rt.db, "stem@example.com")
        cid = await make_conv(rt.db, u.id)
        [fact, _] = await append_chain(
            rt.db,
            u.id,
            cid,
            [("user", "I started volunteering at the animal shelter"), ("assistant", "Lovely")],
        )
        await append_chain(rt.db, u.id, cid, _filler(150))
        [q] = await append_chain(
            rt.db, u.id, cid, [("user", "Where did you say you volunteer these days?")]
        )
        rep = (await _context(rt, u, cid, q)).report
        assert "volunteer~" in rep["recall"]["terms"]
        assert fact not in rep["message_ids"] and fact in rep["recall_message_ids"]
    finally:
        await rt.db.dispose()


async def test_whole_conversation_that_fits_skips_recall(db_url):
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "fits@example.com")
        cid = await make_conv(rt.db, u.id)
        ids = await append_chain(rt.db, u.id, cid, [*_filler(3), ("user", "weather?")])
        rep = (await _context(rt, u, cid, ids[-1], demo_model(8192, 256))).report
        assert rep["recall"] == {"skipped": "whole_path_fits"} and rep["message_ids"] == ids
    finally:
        await rt.db.dispose()


async def test_path_cache_follows_new_turns_and_branch_switches(db_url):
    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "paths@example.com")
        cid = await make_conv(rt.db, u.id)
        ids = await append_chain(rt.db, u.id, cid, _filler(20))
        cache = PathCache()
        async with rt.db.read() as c:
            p1 = await cache.get(c, cid, ids[-1])
        assert list(p1.ids) == ids
        more = await append_chain(rt.db, u.id, cid, _filler(2, start=20))
        alt = await append_chain(rt.db, u.id, cid, [("user", "a branch")], parent=ids[9])
        async with rt.db.read() as c:
            assert list((await cache.get(c, cid, more[-1])).ids) == ids + more
            p3 = await cache.get(c, cid, alt[0])
        assert list(p3.ids) == ids[:10] + alt and ids[12] not in p3
        assert (
            p3.neighbour(ids[8], "user") == ids[9] and p3.neighbour(ids[9], "assistant") == ids[8]
        )
    finally:
        await rt.db.dispose()


async def test_memory_scope_is_the_same_agent_of_the_same_user_only(db_url):
    """``memory_scope`` from an agent's conversation reaches the user's other conversations with
    that agent — never another agent's, never a conversation without an agent, never another
    user's chats with the same (public) agent; and from a conversation without an agent, only
    the user's other conversations without one."""
    from chatmem.agents import service as agents_service
    from chatmem.agents.service import AgentIn

    rt = await _runtime(db_url, recall_scope="memory_scope")
    try:
        u = await make_user(rt.db, "agents@example.com")
        v = await make_user(rt.db, "agents-other@example.com")
        a = await agents_service.create(
            rt.db, u, AgentIn(name="Ada", handle="ada", visibility="public")
        )
        b = await agents_service.create(rt.db, u, AgentIn(name="Bob", handle="bob"))

        async def said(user, text: str, **conv) -> str:
            cid = await make_conv(rt.db, user.id, **conv)
            [mid, _] = await append_chain(
                rt.db, user.id, cid, [("user", text), ("assistant", "Noted.")]
            )
            return mid

        with_a = await said(u, "The cabin wifi password is trout-lantern-42.", agent_id=a["id"])
        with_b = await said(u, "The cabin wifi password is heron-b.", agent_id=b["id"])
        no_agent = await said(u, "The cabin wifi password is otter-none.")
        theirs = await said(v, "The cabin wifi password is lynx-v.", agent_id=a["id"])
        every = {with_a, with_b, no_agent, theirs}

        async def recalled(**conv) -> set[str]:
            cid = await make_conv(rt.db, u.id, **conv)
            await append_chain(rt.db, u.id, cid, _filler(120))
            [q] = await append_chain(
                rt.db, u.id, cid, [("user", "What's the cabin wifi password?")]
            )
            rep = (await _context(rt, u, cid, q)).report
            assert rep["recall"]["scope"] == "memory_scope"
            ids = set(rep["recall_message_ids"])
            async with rt.db.read() as c:
                rows = (await c.execute(t.messages.select().where(t.messages.c.id.in_(ids)))).all()
            assert rows and all(r.user_id == u.id for r in rows)
            return ids & every

        assert await recalled(agent_id=a["id"]) == {with_a}
        assert await recalled() == {no_agent}
    finally:
        await rt.db.dispose()


async def test_a_message_covered_by_a_summary_is_recalled_verbatim(db_url):
    """Compaction summarised the start of the conversation: the fact said there is no longer in
    the verbatim tail, yet recall brings the message itself back, with its score in the report."""
    from chatmem.context import compaction as cp

    rt = await _runtime(db_url)
    try:
        u = await make_user(rt.db, "summarised@example.com")
        cid = await make_conv(rt.db, u.id)
        [fact, answer] = await append_chain(
            rt.db,
            u.id,
            cid,
            [
                ("user", "My sister Lena works as a glassblower in Murano."),
                ("assistant", "A glassblower! That must be beautiful work."),
            ],
        )
        await append_chain(rt.db, u.id, cid, _filler(150))
        res = await cp.compact(
            rt.db,
            conversation_id=cid,
            user_id=u.id,
            settings=rt.settings,
            model=demo_model(1024, 128),
            summarizer=cp.ExtractiveSummarizer(C),
        )
        assert res.compacted and res.chain[0]["from_message_id"] == fact
        [q] = await append_chain(rt.db, u.id, cid, [("user", "What does Lena do for a living?")])
        rep = (await _context(rt, u, cid, q)).report
        assert rep["summary_block_ids"]  # the fact's range is summarised …
        assert fact not in rep["message_ids"]  # … and not verbatim …
        assert rep["recall_message_ids"][:2] == [fact, answer]  # … but recalled
        [sec] = [s for s in rep["sections"] if s["name"] == "recall"]
        assert sec["message_ids"] == rep["recall_message_ids"]
        hit = next(h for h in sec["hits"] if h["id"] == fact)
        assert hit["score"] > 0 and hit["conversation_id"] == cid
        assert [h["score"] for h in sec["hits"]] == sorted(
            (h["score"] for h in sec["hits"]), reverse=True
        )
    finally:
        await rt.db.dispose()


async def test_recall_fuses_the_vector_ranking_when_an_embedder_is_configured(db_url, monkeypatch):
    """With an embedder (registered as an entry point, embedded by the background job), a
    paraphrased question that shares no word with its answer recalls it through the vector
    ranking; without the query's vector the same turn falls back to full text and does not."""
    from importlib.metadata import EntryPoint

    from chatmem.embeddings import jobs as ejobs
    from chatmem.embeddings import registry

    from .embed_support import drain, running_app

    ep = EntryPoint("concepts", "tests.embed_support:ConceptEmbedder", registry.GROUP)
    real = registry.available
    monkeypatch.setattr(registry, "available", lambda: {**real(), "concepts": ep})
    settings = make_settings(
        db_url, embedder="concepts", embedding_debounce_ms=0, run_worker=False, recall_fill=False
    )
    async with running_app(settings, "vectors@example.com") as (rt, api):
        u = Principal(id=api.id, email=api.email)
        cid = await make_conv(rt.db, u.id)
        [fact, _] = await append_chain(
            rt.db,
            u.id,
            cid,
            [("user", "I am learning Swahili with an app"), ("assistant", "Nice!")],
        )
        await append_chain(rt.db, u.id, cid, _filler(150))
        [q] = await append_chain(rt.db, u.id, cid, [("user", "Which language am I studying?")])
        async with rt.db.write() as c:
            assert await ejobs.schedule_embedding(c, cid)
        await drain(rt)
        await ctx.warm_query(rt, user_id=u.id, conversation_id=cid, message_id=q)
        rep = (await _context(rt, u, cid, q)).report
        assert fact not in rep["message_ids"]
        assert fact in rep["recall_message_ids"], rep["recall"]
        [sec] = [s for s in rep["sections"] if s["name"] == "recall"]
        assert sec["hits"][0]["id"] == fact  # the only hit: no word in common
        rt.embeddings._queries.clear()  # no query vector this turn: full text alone
        rep = (await _context(rt, u, cid, q)).report
        assert fact not in rep["recall_message_ids"]

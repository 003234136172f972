"""assemble() is pure: budgets, section order, the report, and the never-over-budget property."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatmem.context import assemble as asm
from chatmem.context.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, counter_for

C = counter_for("cl100k_base")


def total(msgs):
    return REQUEST_OVERHEAD + sum(C.count(m.content) + MESSAGE_OVERHEAD for m in msgs)


def hist(n, words=20):
    return [
        asm.HistoryItem(
            f"m{i}", "user" if i % 2 == 0 else "assistant", f"message {i} " + "lorem ipsum " * words
        )
        for i in range(n)
    ]


def run(inp, window=2048, reserved=256, **kw):
    return asm.assemble(
        inp, asm.Budgets(window=window, reserved_output=reserved, **kw), C.count, C.truncate
    )


def test_everything_fits_in_order():
    h = hist(5, words=3)
    out = run(asm.ContextInput(system_prompt="SYS", history=h))
    assert [m.role for m in out.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    r = out.report
    assert r["message_ids"] == [x.id for x in h] and r["dropped_message_count"] == 0
    assert r["total_tokens"] == total(out.messages) <= 2048 - 256
    assert sum(s["tokens"] for s in r["sections"]) == r["total_tokens"]
    assert {s["name"] for s in r["sections"]} == {"system", "history", "overhead"}


def test_old_history_dropped_newest_kept_contiguous():
    h = hist(200)
    out = run(asm.ContextInput(system_prompt="SYS", history=h), window=1024, reserved=200)
    ids = out.report["message_ids"]
    assert ids[-1] == "m199" and out.dropped > 0
    assert ids == [f"m{i}" for i in range(200 - len(ids), 200)]
    assert total(out.messages) <= 1024 - 200


def test_huge_newest_turn_is_truncated_not_dropped():
    h = [
        asm.HistoryItem("old", "assistant", "short"),
        asm.HistoryItem("new", "user", "word " * 5000),
    ]
    out = run(asm.ContextInput(system_prompt="SYS", history=h), window=512, reserved=100)
    assert out.report["message_ids"] == ["new"] and "newest_turn" in out.truncated
    assert total(out.messages) <= 412


def test_agent_mode_follows_seed_000_order():
    mem = asm.MemorySection(
        "以下是用户与该 Agent 的长期记忆，请优先尊重：",
        ("- [偏好 / 重要度 5] 喜欢茶", "- [边界 / 重要度 4] 不要催促"),
        ("a", "b"),
    )
    out = run(
        asm.ContextInput(
            system_prompt="DEFAULT PROMPT",
            style_lines=("STYLE1", "STYLE2", "STYLE3"),
            memories=mem,
            summary=[asm.SummaryPart("sb1", 0, "SUMMARY TEXT")],
            persona="角色卡\n名字：小助手",
            agent_mode=True,
            history=hist(2, 2),
        )
    )
    sys = out.messages[0].content
    order = [
        sys.index(x)
        for x in ("DEFAULT PROMPT", "STYLE1", "STYLE3", "喜欢茶", "此前对话摘要：", "SUMMARY TEXT")
    ]
    assert order == sorted(order)
    assert out.messages[1].role == "user" and out.messages[1].content.startswith("角色卡")
    assert [m.content[:9] for m in out.messages[2:]] == ["message 0", "message 1"]
    assert out.report["memory_ids"] == ["a", "b"] and out.report["summary_block_ids"] == ["sb1"]


def test_seed_001_summary_prepended_to_first_kept_user_message():
    out = run(
        asm.ContextInput(
            system_prompt="SYS",
            project_instructions="Be terse.",
            summary=[asm.SummaryPart("sb1", 0, "EARLIER"), asm.SummaryPart("sb2", 1, "LATER")],
            history=hist(3, 2),
        )
    )
    assert "Project instructions:\nBe terse." in out.messages[0].content
    first = out.messages[1]
    assert first.role == "user" and first.content.startswith("<conversation-summary>")
    assert (
        first.content.index("EARLIER")
        < first.content.index("LATER")
        < first.content.index("message 0")
    )
    names = [s["name"] for s in out.report["sections"]]
    assert names == ["system", "project", "summary", "history", "overhead"]


def test_memory_lines_packed_into_their_budget():
    lines = tuple(f"- memory number {i} " + "detail " * 10 for i in range(50))
    ids = tuple(f"mem{i}" for i in range(50))
    out = run(
        asm.ContextInput(
            system_prompt="SYS",
            memories=asm.MemorySection("Memories:", lines, ids),
            history=hist(1),
        ),
        memory_tokens=100,
    )
    sec = next(s for s in out.report["sections"] if s["name"] == "memories")
    assert 0 < sec["tokens"] <= 100 and "memories" in out.truncated
    assert out.report["memory_ids"] == [f"mem{i}" for i in range(len(out.report["memory_ids"]))]


def test_inline_quote_and_anchor_in_system_message():
    q = asm.InlineQuote(
        quote="the quoted span",
        anchor_id="anchor1",
        anchor_role="assistant",
        anchor_text="full anchor message " * 3,
    )
    out = run(asm.ContextInput(system_prompt="SYS", inline=q, history=hist(1, 2)))
    sys = out.messages[0].content
    assert "<excerpt>\nthe quoted span\n</excerpt>" in sys and "full anchor message" in sys
    sec = next(s for s in out.report["sections"] if s["name"] == "inline")
    assert sec["message_ids"] == ["anchor1"]


def test_empty_history_preview():
    out = run(asm.ContextInput(system_prompt="SYS", history=[]))
    assert [m.role for m in out.messages] == ["system"] and out.report["message_ids"] == []


texts = st.lists(
    st.sampled_from(
        ["a", "bc", " ", "xyz ", "我喜欢", "123", "\n", ".", "!", "lorem ", "🤖", "ipsum dolor "]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    msgs=st.lists(texts, min_size=1, max_size=40),
    window=st.integers(min_value=64, max_value=3000),
    reserved_frac=st.floats(min_value=0.0, max_value=0.45),
    system=texts,
    project=texts,
    persona=texts,
    mem=st.lists(texts, max_size=12),
    summary=st.lists(texts, max_size=5),
    quote=st.none() | texts,
    memory_tokens=st.integers(min_value=0, max_value=2000),
    summary_tokens=st.integers(min_value=0, max_value=2000),
    agent=st.booleans(),
)
def test_property_never_over_budget_and_newest_kept(
    msgs,
    window,
    reserved_frac,
    system,
    project,
    persona,
    mem,
    summary,
    quote,
    memory_tokens,
    summary_tokens,
    agent,
):
    reserved = min(int(window * reserved_frac), window - asm.MIN_LIMIT)
    history = [
        asm.HistoryItem(f"m{i}", "user" if i % 2 == 0 else "assistant", t)
        for i, t in enumerate(msgs)
    ]
    inp = asm.ContextInput(
        system_prompt=system,
        history=history,
        project_instructions=project,
        persona=persona,
        agent_mode=agent,
        style_lines=("style",) if agent else (),
        memories=asm.MemorySection(
            "Memories:", tuple(mem), tuple(f"k{i}" for i in range(len(mem)))
        ),
        summary=[asm.SummaryPart(f"s{i}", 0, t) for i, t in enumerate(summary)],
        inline=asm.InlineQuote(quote, "a", "assistant", "anchor " + quote)
        if quote is not None
        else None,
    )
    out = run(
        inp,
        window=window,
        reserved=reserved,
        memory_tokens=memory_tokens,
        summary_tokens=summary_tokens,
    )
    assert total(out.messages) <= window - reserved
    assert out.report["total_tokens"] == total(out.messages)
    assert out.report["message_ids"][-1] == history[-1].id
    kept = out.report["message_ids"]
    assert kept == [h.id for h in history[len(history) - len(kept) :]]  # a contiguous tail
    assert sum(s["tokens"] for s in out.report["sections"]) == out.report["total_tokens"]


def test_dates_are_shown_when_the_tail_spans_days():
    """Imported history keeps its dates: a tail over several days states today's date in the
    system message and marks each message that starts a new day (the first one kept too, though
    it starts mid-day); a tail of one day, with nothing recalled, shows no dates."""
    day, now = 86_400_000, 1_718_445_600_000  # 2024-06-15T10:00Z

    def item(i: int, at: int) -> asm.HistoryItem:
        role = "user" if i % 2 == 0 else "assistant"
        return asm.HistoryItem(f"m{i}", role, f"message {i} " + "lorem ipsum " * 20, at)

    t0 = now - 30 * day
    h = [item(i, t0 + (i // 20) * day + i) for i in range(60)]  # 20 messages a day, 3 days
    out = run(asm.ContextInput(system_prompt="SYS", history=h, now_ms=now))
    ids = out.report["message_ids"]
    assert 20 < len(ids) < 40 and ids[-1] == "m59"  # the tail starts on the second day
    system, *rest = out.messages
    assert system.content == "SYS\nCurrent date: 2024-06-15."
    marked = [m.content.split("\n", 1)[0] for m in rest if m.content.startswith("[")]
    assert marked == ["[2024-05-17]", "[2024-05-18]"]
    assert rest[0].content.startswith("[2024-05-17]\nmessage ")
    assert next(m for m in rest if m.content.startswith("[2024-05-18]")).content.startswith(
        "[2024-05-18]\nmessage 40 "
    )
    assert out.report["total_tokens"] == total(out.messages) <= 2048 - 256

    same_day = [item(i, t0 + i) for i in range(60)]
    out = run(asm.ContextInput(system_prompt="SYS", history=same_day, now_ms=now), window=4096)
    assert out.messages[0].content == "SYS"
    assert not any(m.content.startswith("[") for m in out.messages)

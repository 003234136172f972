"""CPU-bound text work stays off the event loop (issue 10): long texts are tokenised on the text
pool, a large context is assembled there, and the pool is not the one password hashes queue on."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from chatmem import cpu
from chatmem.context import assemble as asm
from chatmem.context import service
from chatmem.context.tokens import OFFLOAD_CHARS, TokenCounter


class SpyCounter(TokenCounter):
    """Records which thread tokenised each text (by its length)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, str]] = []
        real = self.encoding

        spy = self

        class Enc:
            name = real.name

            def encode_ordinary(self, text: str) -> list[int]:
                spy.calls.append((len(text), threading.current_thread().name))
                return real.encode_ordinary(text)

            def decode(self, tokens, errors="strict"):
                return real.decode(tokens, errors=errors)

        self.encoding = Enc()  # type: ignore[assignment]


def long_text(n: int) -> str:
    return ("word " * (n // 5 + 1))[:n]


async def test_prime_counts_long_texts_on_the_text_pool_then_count_is_a_memo_hit():
    c = SpyCounter()
    big = long_text(OFFLOAD_CHARS * 3)
    await c.prime(["short", big, big])
    assert [(n, name.startswith("chatmem-text")) for n, name in c.calls] == [(len(big), True)]
    expected = len(c.encoding.encode_ordinary(big))
    c.calls.clear()
    assert c.count(big) == expected and c.calls == []  # memoised: nothing on the loop
    await c.prime([big])
    assert c.calls == []  # already counted: not again
    assert c.count("short") > 0 and c.calls == [(5, threading.current_thread().name)]


async def test_a_large_context_is_assembled_off_the_loop():
    c = SpyCounter()
    big = long_text(service.ASSEMBLE_OFFLOAD_CHARS)
    history = [
        asm.HistoryItem("m1", "user", big, 1),
        asm.HistoryItem("m2", "assistant", "ok", 2),
        asm.HistoryItem("m3", "user", "and now?", 3),
    ]
    inp = asm.ContextInput(system_prompt="SYS", history=history)
    out = await service._run_assembler(inp, asm.Budgets(window=2048, reserved_output=256), c)
    assert out.messages[-1].content.endswith("and now?")
    loop_thread = threading.current_thread().name
    heavy = [name for n, name in c.calls if n >= OFFLOAD_CHARS]
    assert heavy and loop_thread not in heavy  # the big message was counted and cut elsewhere


async def test_a_small_context_stays_on_the_loop():
    c = SpyCounter()
    history = [asm.HistoryItem("m1", "user", "hello", 1)]
    inp = asm.ContextInput(system_prompt="SYS", history=history)
    await service._run_assembler(inp, asm.Budgets(window=2048, reserved_output=256), c)
    assert {name for _n, name in c.calls} == {threading.current_thread().name}


# ── the other CPU-bound paths: each pure step is seen running on the text pool ────────────────


def spy_threads(monkeypatch, module, name: str) -> list[str]:
    """Wrap ``module.name`` to record the thread each call ran on."""
    seen: list[str] = []
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return seen


async def test_the_extractive_summariser_runs_on_the_text_pool(monkeypatch):
    from chatmem.context import compaction, extractive

    summarize = spy_threads(monkeypatch, extractive, "summarize_messages")
    merge = spy_threads(monkeypatch, extractive, "merge_summaries")
    s = compaction.ExtractiveSummarizer(TokenCounter())
    items = [("user", "My sister Lena works as a glassblower in Murano. She loves it.", 1)]
    assert await s.summarize(items, 50)
    assert await s.merge(["Lena is a glassblower.", "She lives in Murano."], 50)
    assert len(summarize) == len(merge) == 1
    assert summarize[0].startswith("chatmem-text") and merge[0].startswith("chatmem-text")


async def test_search_ranks_and_snips_on_the_text_pool(app, new_user, monkeypatch):
    from chatmem.search import service as search_service

    from .social_support import insert_chain, new_conv

    seen = spy_threads(monkeypatch, search_service, "_ranked")
    u = await new_user()
    cid = await new_conv(u, "Trip")
    await insert_chain(app, cid, [{"role": "user", "text": "plan my trip to Lisbon"}])
    r = await u.client.get("/api/search", params={"q": "lisbon"})
    assert r.status_code == 200 and r.json()["messages"], r.text
    assert seen and all(name.startswith("chatmem-text") for name in seen)


async def test_a_conversation_export_renders_on_the_text_pool(app, new_user, monkeypatch):
    from chatmem.portability import exporter

    from .social_support import insert_chain, new_conv

    seen = spy_threads(monkeypatch, exporter, "render_export")
    u = await new_user()
    cid = await new_conv(u, "Export me")
    await insert_chain(app, cid, [{"role": "user", "text": "hello"}])
    for fmt in ("json", "markdown", "html"):
        r = await u.client.get(f"/api/conversations/{cid}/export", params={"format": fmt})
        assert r.status_code == 200, r.text
    assert len(seen) == 3 and all(name.startswith("chatmem-text") for name in seen)


async def test_password_hashes_run_on_a_lower_priority_thread_than_the_loop():
    """The password pool's threads are niced (Linux, per thread): under a login flood on a busy
    machine the kernel schedules the event loop's thread first. The text pool is not niced (a
    user's turn waits on it)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread priorities are a Linux feature")

    def nice_of_this_thread() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    loop_nice = nice_of_this_thread()
    assert await cpu.run_cpu(nice_of_this_thread) == min(19, loop_nice + cpu.CPU_POOL_NICENESS)
    assert await cpu.run_text(nice_of_this_thread) == loop_nice
    assert nice_of_this_thread() == loop_nice  # the caller's thread is untouched

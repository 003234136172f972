"""Context assembly: everything a turn may show the model, packed into the model's window (pure).

``assemble()`` takes already-loaded sections — system prompt, agent style lines and persona card,
project instructions, memory lines, applicable summary blocks, an inline thread's quote and anchor,
and the active path (oldest first, the newest turn last) — plus the window, budgets and a token
counter, and returns provider messages and a **context report** (each section's tokens, the
included message / memory / summary-block ids, ``total_tokens``).

Guarantees, whatever the inputs:
- the request (every message, its framing overhead and the request priming) never exceeds
  ``window - reserved_output``;
- the newest turn is always included (truncated only when it alone would not fit);
- older history is kept as a contiguous tail, newest first, so the model never sees a hole.

Section priority when space is short: system prompt (≤ 1/4 of the budget), newest turn, inline
quote and anchor, project instructions, memories, summaries, persona card, then older history.

Layout follows the seeds: in agent conversations (seed 000) one system message holds the default
prompt, the fixed style lines, memories and the summary, then a user-role persona card, then the
history; otherwise (seed 001) the system message holds the prompt, project instructions and
memories, and the summaries are prepended as a ``<conversation-summary>`` list to the first kept
user message, then the tail verbatim.

No framework, no database: the caller loads rows and passes plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..providers.base import ChatMessage
from .tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD

CountFn = Callable[[str], int]
TruncateFn = Callable[[str, int], str]

SEP_SLACK = 2  # tokens allowed for each "\n\n" join between parts of one message
MIN_LIMIT = 32  # below this no useful request can be built

AGENT_SUMMARY_HEADER = "此前对话摘要："
INLINE_QUOTE_MAX_CHARS = 4000
INLINE_ANCHOR_MAX_CHARS = 8000


@dataclass(frozen=True)
class HistoryItem:
    id: str
    role: str  # user | assistant
    text: str


@dataclass(frozen=True)
class MemorySection:
    header: str = ""
    lines: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()  # one id per line


@dataclass(frozen=True)
class SummaryPart:
    id: str
    level: int
    text: str


@dataclass(frozen=True)
class InlineQuote:
    quote: str
    anchor_id: str
    anchor_role: str
    anchor_text: str


@dataclass(frozen=True)
class Budgets:
    window: int
    reserved_output: int
    memory_tokens: int = 800
    summary_tokens: int = 2048
    persona_tokens: int = 1024
    inline_tokens: int = 4096
    system_share: float = 0.25
    project_share: float = 0.125

    @property
    def limit(self) -> int:
        return self.window - self.reserved_output


@dataclass(frozen=True)
class ContextInput:
    system_prompt: str
    history: Sequence[HistoryItem]
    style_lines: Sequence[str] = ()
    project_instructions: str = ""
    memories: MemorySection = MemorySection()
    summary: Sequence[SummaryPart] = ()  # applicable blocks, oldest first
    persona: str = ""
    agent_mode: bool = False
    inline: InlineQuote | None = None


@dataclass
class Assembled:
    messages: list[ChatMessage]
    report: dict
    dropped: int = 0  # history items (older than the newest turn) that did not fit
    truncated: list[str] = field(default_factory=list)


class _Pack:
    """A running token budget."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, n: int) -> None:
        self.left -= n


def _fit_text(text: str, cap: int, count: CountFn, truncate: TruncateFn) -> tuple[str, int, bool]:
    """``text`` cut to ``cap`` tokens → (text, tokens, truncated)."""
    if cap <= 0 or not text:
        return "", 0, bool(text)
    n = count(text)
    if n <= cap:
        return text, n, False
    cut = truncate(text, cap)
    return cut, count(cut), True


def render_summary(parts: Sequence[SummaryPart], agent_mode: bool) -> str:
    if not parts:
        return ""
    if agent_mode:
        return AGENT_SUMMARY_HEADER + "\n" + "\n".join(p.text for p in parts)
    inner = "\n".join(f'<summary level="{p.level}">\n{p.text}\n</summary>' for p in parts)
    return f"<conversation-summary>\n{inner}\n</conversation-summary>"


def render_inline(q: InlineQuote) -> tuple[str, str]:
    quote = q.quote[:INLINE_QUOTE_MAX_CHARS]
    anchor = q.anchor_text[:INLINE_ANCHOR_MAX_CHARS]
    head = (
        "This is a side thread about an excerpt the user selected from an earlier message. "
        "Answer about the excerpt; the rest of that conversation is not shown.\n"
        f"<excerpt>\n{quote}\n</excerpt>"
    )
    body = f'<source-message role="{q.anchor_role}">\n{anchor}\n</source-message>'
    return head, body


def assemble(
    inp: ContextInput, budgets: Budgets, count: CountFn, truncate: TruncateFn
) -> Assembled:
    """Pack ``inp`` into ``budgets.limit`` tokens; see the module docstring for the rules."""
    limit = budgets.limit
    if limit < MIN_LIMIT:
        raise ValueError(f"window minus reserved output must be at least {MIN_LIMIT} tokens")
    pack = _Pack(limit - REQUEST_OVERHEAD)
    truncated: list[str] = []
    sections: dict[str, dict] = {}

    # 1. the system prompt (+ fixed style lines), at most a share of the budget
    pack.take(MESSAGE_OVERHEAD)
    sys_text = "\n".join([inp.system_prompt, *inp.style_lines]).strip()
    sys_cap = max(int((limit - REQUEST_OVERHEAD) * budgets.system_share), 1)
    sys_text, n, cut = _fit_text(sys_text, min(sys_cap, pack.left), count, truncate)
    pack.take(n)
    sections["system"] = {"name": "system", "tokens": n}
    if cut:
        truncated.append("system")

    # 2. the newest turn, always kept
    newest: HistoryItem | None = None
    if inp.history:
        newest = inp.history[-1]
        pack.take(MESSAGE_OVERHEAD)
        newest_text, n, cut = _fit_text(newest.text, pack.left, count, truncate)
        if cut:
            truncated.append("newest_turn")
        pack.take(n)
        newest = HistoryItem(newest.id, newest.role, newest_text)

    # 3. the inline thread's excerpt and anchor message
    inline_parts: list[str] = []
    if inp.inline is not None:
        head, body = render_inline(inp.inline)
        cap = min(budgets.inline_tokens, pack.left)
        head, n1, c1 = _fit_text(head, cap - SEP_SLACK, count, truncate)
        body, n2, c2 = _fit_text(body, cap - SEP_SLACK - n1 - SEP_SLACK, count, truncate)
        inline_parts = [p for p in (head, body) if p]
        used = n1 + n2 + SEP_SLACK * len(inline_parts)
        pack.take(used)
        sections["inline"] = {
            "name": "inline",
            "tokens": n1 + n2,
            "message_ids": [inp.inline.anchor_id] if body else [],
        }
        if c1 or c2:
            truncated.append("inline")

    # 4. project instructions
    project_text = ""
    if inp.project_instructions.strip():
        text = "Project instructions:\n" + inp.project_instructions.strip()
        cap = min(int((limit - REQUEST_OVERHEAD) * budgets.project_share), pack.left) - SEP_SLACK
        project_text, n, cut = _fit_text(text, cap, count, truncate)
        if project_text:
            pack.take(n + SEP_SLACK)
        sections["project"] = {"name": "project", "tokens": n}
        if cut:
            truncated.append("project")

    # 5. memories: whole lines, in the given (priority) order, within their budget
    memory_text, memory_ids = "", []
    mem = inp.memories
    if mem.lines:
        cap = min(budgets.memory_tokens, pack.left) - SEP_SLACK
        header_n = count(mem.header) + 1 if mem.header else 0
        lines: list[str] = []
        used = header_n
        for line, mid in zip(mem.lines, mem.ids, strict=False):
            n = count(line) + 1
            if used + n <= cap:
                lines.append(line)
                memory_ids.append(mid)
                used += n
        if lines:
            memory_text = "\n".join(([mem.header] if mem.header else []) + lines)
            n = count(memory_text)
            pack.take(n + SEP_SLACK)
            sections["memories"] = {"name": "memories", "tokens": n, "memory_ids": memory_ids}
        else:
            sections["memories"] = {"name": "memories", "tokens": 0, "memory_ids": []}
        if len(lines) < len(mem.lines):
            truncated.append("memories")

    # 6. summaries: the newest blocks that fit (a summary never jumps over a gap it leaves)
    summary_text, block_ids = "", []
    if inp.summary:
        reserve = MESSAGE_OVERHEAD + SEP_SLACK
        cap = min(budgets.summary_tokens, pack.left - reserve)
        chosen: list[SummaryPart] = []
        for part in reversed(inp.summary):
            trial = render_summary([part, *chosen], inp.agent_mode)
            if count(trial) <= cap:
                chosen.insert(0, part)
            else:
                break
        if not chosen and cap > 16:
            last = inp.summary[-1]
            frame = count(render_summary([SummaryPart(last.id, last.level, "")], inp.agent_mode))
            text = truncate(last.text, cap - frame - 2)
            if text:
                chosen = [SummaryPart(last.id, last.level, text)]
        if len(chosen) < len(inp.summary) or (chosen and chosen[-1].text != inp.summary[-1].text):
            truncated.append("summary")
        if chosen:
            summary_text = render_summary(chosen, inp.agent_mode)
            block_ids = [p.id for p in chosen]
            n = count(summary_text)
            pack.take(n + reserve)
            sections["summary"] = {"name": "summary", "tokens": n, "block_ids": block_ids}
        else:
            sections["summary"] = {"name": "summary", "tokens": 0, "block_ids": []}

    # 7. the persona card (agent conversations), a user-role message of its own
    persona_text = ""
    if inp.persona.strip():
        cap = min(budgets.persona_tokens, pack.left) - MESSAGE_OVERHEAD
        persona_text, n, cut = _fit_text(inp.persona.strip(), cap, count, truncate)
        if persona_text:
            pack.take(n + MESSAGE_OVERHEAD)
        sections["persona"] = {"name": "persona", "tokens": n}
        if cut:
            truncated.append("persona")

    # 8. older history, newest first, as long as it fits (contiguous)
    kept: list[HistoryItem] = []
    for item in reversed(inp.history[:-1]):
        n = count(item.text) + MESSAGE_OVERHEAD
        if n > pack.left:
            break
        kept.append(item)
        pack.take(n)
    kept.reverse()
    dropped = max(len(inp.history) - 1 - len(kept), 0)

    # Build the messages, then verify the exact total and trim if BPE joins cost more than planned.
    def build(history: list[HistoryItem], sys_body: str) -> list[ChatMessage]:
        system_parts = [p for p in (sys_body, *inline_parts, project_text, memory_text) if p]
        if inp.agent_mode and summary_text:
            system_parts.append(summary_text)
        msgs = [ChatMessage("system", "\n\n".join(system_parts))]
        if persona_text:
            msgs.append(ChatMessage("user", persona_text))
        hist = [
            ChatMessage("assistant" if h.role == "assistant" else "user", h.text) for h in history
        ]
        if summary_text and not inp.agent_mode:
            if hist and hist[0].role == "user":
                hist[0] = ChatMessage("user", summary_text + "\n\n" + hist[0].content)
            else:
                hist.insert(0, ChatMessage("user", summary_text))
        return msgs + hist

    def total_of(msgs: list[ChatMessage]) -> int:
        return REQUEST_OVERHEAD + sum(count(m.content) + MESSAGE_OVERHEAD for m in msgs)

    history = kept + ([newest] if newest is not None else [])
    messages = build(history, sys_text)
    total = total_of(messages)
    while total > limit:
        if len(history) > 1:
            history.pop(0)
            dropped += 1
        else:  # only possible with pathological joins: shave the system prompt
            excess = total - limit + SEP_SLACK
            new_sys = truncate(sys_text, max(count(sys_text) - excess, 0))
            if new_sys == sys_text and newest is not None:
                newest = HistoryItem(
                    newest.id,
                    newest.role,
                    truncate(newest.text, max(count(newest.text) - excess, 0)),
                )
                history = [newest]
                if "newest_turn" not in truncated:
                    truncated.append("newest_turn")
            stuck = new_sys == sys_text and (newest is None or not newest.text)
            sys_text = new_sys
            sections["system"]["tokens"] = count(sys_text)
            if "system" not in truncated:
                truncated.append("system")
            if stuck:  # last resort: drop the optional sections (never reached in practice)
                persona_text = summary_text = memory_text = project_text = ""
                inline_parts = []
                for k in ("persona", "summary", "memories", "project", "inline"):
                    if k in sections:
                        sections[k]["tokens"] = 0
                        truncated.append(k)
                memory_ids, block_ids = [], []
        messages = build(history, sys_text)
        total = total_of(messages)

    included = [h.id for h in history]
    history_tokens = sum(count(h.text) + MESSAGE_OVERHEAD for h in history)
    sections["history"] = {
        "name": "history",
        "tokens": history_tokens,
        "message_ids": included,
        "dropped": dropped,
    }
    order = ["system", "inline", "project", "memories", "summary", "persona", "history"]
    out_sections = [sections[k] for k in order if k in sections]
    overhead = total - sum(s["tokens"] for s in out_sections)
    out_sections.append({"name": "overhead", "tokens": overhead})
    report = {
        "window": budgets.window,
        "reserved_output_tokens": budgets.reserved_output,
        "limit": limit,
        "total_tokens": total,
        "sections": out_sections,
        "message_ids": included,
        "memory_ids": memory_ids,
        "summary_block_ids": block_ids,
        "dropped_message_count": dropped,
        "truncated": truncated,
    }
    return Assembled(messages, report, dropped, truncated)

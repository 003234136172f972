"""Context assembly: everything a turn may show the model, packed into the model's window (pure).

``assemble()`` takes already-loaded sections — system prompt, agent style lines and persona card,
project instructions, memory lines, applicable summary blocks, an inline thread's quote and anchor,
recall candidates (``recall.Group``, best first) and the active path (oldest first, the newest turn
last) — plus the window, budgets and a token counter, and returns provider messages and a
**context report** (each section's tokens, the included message / memory / summary-block /
recalled ids, ``total_tokens``).

Guarantees, whatever the inputs:
- the request (every message, its framing overhead and the request priming) never exceeds
  ``window - reserved_output``;
- the newest turn is always included (truncated only when it alone would not fit);
- older history is kept as a contiguous tail, newest first, so the model never sees a hole;
- a recalled message is never also verbatim in the prompt.

Budgets are token-driven: after the fixed sections, recall may take up to ``recall_tokens`` (only
as much as its relevant hits need) and the verbatim tail takes everything else, so a 128k model
keeps far more of the conversation verbatim than an 8k one. Section priority when space is short:
system prompt (≤ 1/4 of the budget), newest turn, inline quote and anchor, project instructions,
memories, summaries, persona card, recall, then older history.

Layout follows the seeds: in agent conversations (seed 000) one system message holds the default
prompt, the fixed style lines, memories, the summary and the recalled messages, then a user-role
persona card, then the history; otherwise (seed 001) the system message holds the prompt, project
instructions, memories and recalled messages, the summaries are prepended as a
``<conversation-summary>`` list to the first kept user message, then the tail verbatim. When the
prompt shows dates (recalled messages, or a tail spanning several days), the system message says
today's date and each tail message that starts a new day is prefixed with its date.

No framework, no database: the caller loads rows and passes plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..providers.base import ChatMessage
from . import recall as rc
from .tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD

CountFn = Callable[[str], int]
TruncateFn = Callable[[str, int], str]

SEP_SLACK = 2  # tokens allowed for each "\n\n" join between parts of one message
MIN_LIMIT = 32  # below this no useful request can be built
DAY_MS = 86_400_000

AGENT_SUMMARY_HEADER = "此前对话摘要："
INLINE_QUOTE_MAX_CHARS = 4000
INLINE_ANCHOR_MAX_CHARS = 8000
OPTIONAL = ("persona", "summary", "memories", "project", "inline", "recall")


@dataclass(frozen=True)
class HistoryItem:
    id: str
    role: str  # user | assistant
    text: str
    created_at: int = 0  # ms; 0 = unknown


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
    recall_tokens: int = 0  # the most recall may take (0 = off)
    recall_item_tokens: int = 400  # the most one recalled message may take
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
    recall: Sequence[rc.Group] = ()  # candidates, best first
    recall_header: str = rc.HEADER
    now_ms: int = 0  # today's date is stated when dates are shown (0 = never)


@dataclass
class Assembled:
    messages: list[ChatMessage]
    report: dict
    dropped: int = 0  # history items (older than the newest turn) that did not fit
    truncated: list[str] = field(default_factory=list)


@dataclass
class _State:
    """What the section steps build up: texts, ids, per-section reports, the running budget."""

    left: int
    truncated: list[str] = field(default_factory=list)
    sections: dict[str, dict] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    inline_parts: list[str] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    recall: rc.Packed = field(default_factory=rc.Packed)
    newest: HistoryItem | None = None
    dates: bool = False  # the prompt shows dates (today's date, day markers)

    def take(self, n: int) -> None:
        self.left -= n

    def cut(self, name: str) -> None:
        if name not in self.truncated:
            self.truncated.append(name)


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


# ── the fixed sections, in priority order ───────────────────────────────────────────────────────


def _system(s: _State, inp: ContextInput, b: Budgets, count, truncate) -> None:
    s.take(MESSAGE_OVERHEAD)
    text = "\n".join([inp.system_prompt, *inp.style_lines]).strip()
    cap = max(int((b.limit - REQUEST_OVERHEAD) * b.system_share), 1)
    text, n, cut = _fit_text(text, min(cap, s.left), count, truncate)
    s.take(n)
    s.texts["system"] = text
    s.sections["system"] = {"name": "system", "tokens": n}
    if cut:
        s.cut("system")


def _newest(s: _State, inp: ContextInput, count, truncate) -> None:
    if not inp.history:
        return
    newest = inp.history[-1]
    s.take(MESSAGE_OVERHEAD)
    text, n, cut = _fit_text(newest.text, s.left, count, truncate)
    if cut:
        s.cut("newest_turn")
    s.take(n)
    s.newest = HistoryItem(newest.id, newest.role, text, newest.created_at)


def _inline(s: _State, inp: ContextInput, b: Budgets, count, truncate) -> None:
    if inp.inline is None:
        return
    head, body = render_inline(inp.inline)
    cap = min(b.inline_tokens, s.left)
    head, n1, c1 = _fit_text(head, cap - SEP_SLACK, count, truncate)
    body, n2, c2 = _fit_text(body, cap - SEP_SLACK - n1 - SEP_SLACK, count, truncate)
    s.inline_parts = [p for p in (head, body) if p]
    s.take(n1 + n2 + SEP_SLACK * len(s.inline_parts))
    s.sections["inline"] = {
        "name": "inline",
        "tokens": n1 + n2,
        "message_ids": [inp.inline.anchor_id] if body else [],
    }
    if c1 or c2:
        s.cut("inline")


def _project(s: _State, inp: ContextInput, b: Budgets, count, truncate) -> None:
    if not inp.project_instructions.strip():
        return
    text = "Project instructions:\n" + inp.project_instructions.strip()
    cap = min(int((b.limit - REQUEST_OVERHEAD) * b.project_share), s.left) - SEP_SLACK
    text, n, cut = _fit_text(text, cap, count, truncate)
    if text:
        s.take(n + SEP_SLACK)
    s.texts["project"] = text
    s.sections["project"] = {"name": "project", "tokens": n}
    if cut:
        s.cut("project")


def _memories(s: _State, inp: ContextInput, b: Budgets, count) -> None:
    """Whole lines, in the given (priority) order, within their budget."""
    mem = inp.memories
    if not mem.lines:
        return
    cap = min(b.memory_tokens, s.left) - SEP_SLACK
    used = count(mem.header) + 1 if mem.header else 0
    lines: list[str] = []
    for line, mid in zip(mem.lines, mem.ids, strict=False):
        n = count(line) + 1
        if used + n <= cap:
            lines.append(line)
            s.memory_ids.append(mid)
            used += n
    n = 0
    if lines:
        s.texts["memories"] = "\n".join(([mem.header] if mem.header else []) + lines)
        n = count(s.texts["memories"])
        s.take(n + SEP_SLACK)
    s.sections["memories"] = {"name": "memories", "tokens": n, "memory_ids": list(s.memory_ids)}
    if len(lines) < len(mem.lines):
        s.cut("memories")


def _summary(s: _State, inp: ContextInput, b: Budgets, count, truncate) -> None:
    """The newest blocks that fit (a summary never jumps over a gap it leaves)."""
    if not inp.summary:
        return
    reserve = MESSAGE_OVERHEAD + SEP_SLACK
    cap = min(b.summary_tokens, s.left - reserve)
    chosen: list[SummaryPart] = []
    for part in reversed(inp.summary):
        if count(render_summary([part, *chosen], inp.agent_mode)) > cap:
            break
        chosen.insert(0, part)
    if not chosen and cap > 16:
        last = inp.summary[-1]
        frame = count(render_summary([SummaryPart(last.id, last.level, "")], inp.agent_mode))
        text = truncate(last.text, cap - frame - 2)
        if text:
            chosen = [SummaryPart(last.id, last.level, text)]
    if len(chosen) < len(inp.summary) or (chosen and chosen[-1].text != inp.summary[-1].text):
        s.cut("summary")
    n = 0
    if chosen:
        s.texts["summary"] = render_summary(chosen, inp.agent_mode)
        s.block_ids = [p.id for p in chosen]
        n = count(s.texts["summary"])
        s.take(n + reserve)
    s.sections["summary"] = {"name": "summary", "tokens": n, "block_ids": list(s.block_ids)}


def _persona(s: _State, inp: ContextInput, b: Budgets, count, truncate) -> None:
    """The persona card (agent conversations), a user-role message of its own."""
    if not inp.persona.strip():
        return
    cap = min(b.persona_tokens, s.left) - MESSAGE_OVERHEAD
    text, n, cut = _fit_text(inp.persona.strip(), cap, count, truncate)
    if text:
        s.take(n + MESSAGE_OVERHEAD)
    s.texts["persona"] = text
    s.sections["persona"] = {"name": "persona", "tokens": n}
    if cut:
        s.cut("persona")


# ── dates, history and recall ───────────────────────────────────────────────────────────────────

DATE_RESERVE = 10  # tokens kept for the date prefix of the first message of the tail


def _shows_dates(inp: ContextInput) -> bool:
    times = [h.created_at for h in inp.history if h.created_at > 0]
    multi_day = bool(times) and rc.day(min(times)) != rc.day(max(times))
    return inp.now_ms > 0 and (multi_day or bool(inp.recall))


def _dated(items: Sequence[HistoryItem], first_too: bool) -> list[HistoryItem]:
    """Items whose day differs from the one before them (and the first, with ``first_too``) get
    a ``[YYYY-MM-DD]`` line in front."""
    out, prev = [], None
    for i, h in enumerate(items):
        d = rc.day(h.created_at)
        if d and (d != prev or (i == 0 and first_too)):
            out.append(HistoryItem(h.id, h.role, f"[{d}]\n{h.text}", h.created_at))
        else:
            out.append(h)
        prev = d or prev
    return out


def _extend(costs: Sequence[int], start: int, budget: int, used: int = 0) -> tuple[int, int]:
    """Grow the contiguous tail ``[start:]`` towards older items while it fits ``budget``."""
    while start > 0 and used + costs[start - 1] <= budget:
        start -= 1
        used += costs[start]
    return start, used


def _history_and_recall(
    s: _State, inp: ContextInput, older: list[HistoryItem], b: Budgets, count, truncate
) -> list[HistoryItem]:
    """The verbatim tail and the recall section share what is left: recall gets at most
    ``recall_tokens`` (only what its hits need), the tail everything else; a message that ends
    up verbatim is never recalled too. Returns the kept tail (oldest first)."""
    costs = [count(h.text) + MESSAGE_OVERHEAD for h in older]
    free = s.left - (DATE_RESERVE if s.dates else 0)
    cap = min(b.recall_tokens, free) if inp.recall else 0
    start, used = _extend(costs, len(older), free - cap)
    pinned = {s.newest.id} if s.newest else set()
    pinned |= {inp.inline.anchor_id} if inp.inline else set()
    budget = min(cap, free - used) - SEP_SLACK
    packed = rc.Packed()
    for _ in range(4):
        # pack recall around the current tail, then let the tail take whatever recall left;
        # a message the tail now shows verbatim leaves recall, which re-packs in no more room
        packed = rc.pack(
            inp.recall,
            budget=budget,
            exclude=pinned | {h.id for h in older[start:]},
            header=inp.recall_header,
            item_tokens=b.recall_item_tokens,
            count=count,
            truncate=truncate,
        )
        start, used = _extend(costs, start, free - packed.tokens - SEP_SLACK, used)
        if not set(packed.ids) & {h.id for h in older[start:]}:
            break
        budget = packed.tokens
    else:  # still overlapping after the last extension: drop what the tail already shows
        packed = rc.pack(
            inp.recall,
            budget=packed.tokens,
            exclude=pinned | {h.id for h in older[start:]},
            header=inp.recall_header,
            item_tokens=b.recall_item_tokens,
            count=count,
            truncate=truncate,
        )
    s.recall = packed
    s.take(used + (packed.tokens + SEP_SLACK if packed.tokens else 0))
    if inp.recall:
        s.sections["recall"] = {
            "name": "recall",
            "tokens": packed.tokens,
            "message_ids": packed.ids,
            "hits": [
                {
                    "id": g.hit_id,
                    "score": round(g.score, 6),
                    "conversation_id": g.messages[0].conversation_id,
                }
                for g in packed.groups
            ],
        }
    return older[start:]


# ── building and checking the request ───────────────────────────────────────────────────────────


def _build(s: _State, inp: ContextInput, history: list[HistoryItem]) -> list[ChatMessage]:
    t = s.texts
    system_parts = [
        t.get("system", ""),
        *s.inline_parts,
        t.get("project", ""),
        t.get("memories", ""),
    ]
    if inp.agent_mode:
        system_parts.append(t.get("summary", ""))
    system_parts.append(s.recall.text)
    msgs = [ChatMessage("system", "\n\n".join(p for p in system_parts if p))]
    if t.get("persona"):
        msgs.append(ChatMessage("user", t["persona"]))
    if s.dates and history and not history[0].text.startswith("["):
        first = history[0]  # the tail starts mid-day: say which day
        history = [*_dated([first], first_too=True), *history[1:]]
    hist = [ChatMessage("assistant" if h.role == "assistant" else "user", h.text) for h in history]
    summary = t.get("summary", "")
    if summary and not inp.agent_mode:
        if hist and hist[0].role == "user":
            hist[0] = ChatMessage("user", summary + "\n\n" + hist[0].content)
        else:
            hist.insert(0, ChatMessage("user", summary))
    return msgs + hist


def _total(msgs: list[ChatMessage], count: CountFn) -> int:
    return REQUEST_OVERHEAD + sum(count(m.content) + MESSAGE_OVERHEAD for m in msgs)


def _shave(
    s: _State, history: list[HistoryItem], excess: int, count, truncate
) -> list[HistoryItem]:
    """Only possible with pathological joins: shave the system prompt, then the newest turn, and
    as a last resort drop every optional section (never reached in practice)."""
    sys_text = s.texts["system"]
    new_sys = truncate(sys_text, max(count(sys_text) - excess, 0))
    if new_sys == sys_text and s.newest is not None:
        n = s.newest
        s.newest = HistoryItem(
            n.id, n.role, truncate(n.text, max(count(n.text) - excess, 0)), n.created_at
        )
        history = [s.newest]
        s.cut("newest_turn")
    stuck = new_sys == sys_text and (s.newest is None or not s.newest.text)
    s.texts["system"] = new_sys
    s.sections["system"]["tokens"] = count(new_sys)
    s.cut("system")
    if stuck:
        for k in OPTIONAL:
            s.texts.pop(k, None)
            if k in s.sections:
                s.sections[k]["tokens"] = 0
                s.cut(k)
        s.inline_parts, s.memory_ids, s.block_ids, s.recall = [], [], [], rc.Packed()
    return history


def _fit(s: _State, inp: ContextInput, history: list[HistoryItem], limit: int, count, truncate):
    """Build the messages and drop the oldest kept history while BPE joins cost more than
    planned; returns (messages, history, extra drops, total)."""
    dropped = 0
    messages = _build(s, inp, history)
    total = _total(messages, count)
    while total > limit:
        if len(history) > 1:
            history.pop(0)
            dropped += 1
        else:
            history = _shave(s, history, total - limit + SEP_SLACK, count, truncate)
        messages = _build(s, inp, history)
        total = _total(messages, count)
    return messages, history, dropped, total


def _report(s: _State, b: Budgets, history, dropped: int, total: int, count) -> dict:
    s.sections["history"] = {
        "name": "history",
        "tokens": sum(count(h.text) + MESSAGE_OVERHEAD for h in history),
        "message_ids": [h.id for h in history],
        "dropped": dropped,
    }
    order = ["system", "inline", "project", "memories", "summary", "persona", "recall", "history"]
    out = [s.sections[k] for k in order if k in s.sections]
    out.append({"name": "overhead", "tokens": total - sum(x["tokens"] for x in out)})
    return {
        "window": b.window,
        "reserved_output_tokens": b.reserved_output,
        "limit": b.limit,
        "total_tokens": total,
        "sections": out,
        "message_ids": [h.id for h in history],
        "memory_ids": list(s.memory_ids),
        "summary_block_ids": list(s.block_ids),
        "recall_message_ids": s.recall.ids,
        "dropped_message_count": dropped,
        "truncated": list(s.truncated),
    }


def assemble(
    inp: ContextInput, budgets: Budgets, count: CountFn, truncate: TruncateFn
) -> Assembled:
    """Pack ``inp`` into ``budgets.limit`` tokens; see the module docstring for the rules."""
    limit = budgets.limit
    if limit < MIN_LIMIT:
        raise ValueError(f"window minus reserved output must be at least {MIN_LIMIT} tokens")
    s = _State(left=limit - REQUEST_OVERHEAD, dates=_shows_dates(inp))
    if s.dates:
        inp = _with_dates(inp)
    _system(s, inp, budgets, count, truncate)
    _newest(s, inp, count, truncate)
    _inline(s, inp, budgets, count, truncate)
    _project(s, inp, budgets, count, truncate)
    _memories(s, inp, budgets, count)
    _summary(s, inp, budgets, count, truncate)
    _persona(s, inp, budgets, count, truncate)
    older = list(inp.history[:-1])
    tail = _history_and_recall(s, inp, older, budgets, count, truncate)
    history = tail + ([s.newest] if s.newest is not None else [])
    dropped = len(older) - len(tail)
    messages, history, extra, total = _fit(s, inp, history, limit, count, truncate)
    report = _report(s, budgets, history, dropped + extra, total, count)
    return Assembled(messages, report, dropped + extra, list(s.truncated))


def _with_dates(inp: ContextInput) -> ContextInput:
    """The input with today's date in the system prompt and day markers on the history."""
    history = _dated(inp.history, first_too=False)
    system = f"{inp.system_prompt}\nCurrent date: {rc.day(inp.now_ms)}.".strip()
    return replace(inp, history=history, system_prompt=system)

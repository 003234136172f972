"""Summary blocks and compaction planning: which blocks apply, where to cut, when to compact (pure).

A conversation's ``summary_blocks`` is a JSON list of blocks, each summarising one contiguous range
of a path: ``{id, level, from_message_id, anchor_message_id, text, tokens, media}`` plus what this
module needs to check them cheaply — ``from_parent_id`` (the parent the first summarised message had
when the block was written, ``None`` for the root) and both messages' depths.

Blocks of one path form a chain from the root: a block's ``from_parent_id`` is the anchor of the
block before it. A block applies only when its anchor is on the active path and the chain under it
is intact, so a branch made before a summarised range never sees that summary, and a gap (a deleted
or re-parented endpoint) hides every block after it. Blocks of different branches coexist in the
list; each path picks its own chain.

Compaction is token-driven: it keeps the newest part of the path verbatim (as many rounds as fit
half the window, never fewer than the last N rounds), cuts only right before a user message, never
at or past a ``streaming`` row, and folds the oldest blocks into a coarser one when the chain's
summaries outgrow their budget. No framework, no database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MISSING = object()


@dataclass(frozen=True)
class TailMsg:
    """One message of the unsummarised part of a path (oldest first)."""

    id: str
    role: str
    status: str
    tokens: int


def _pref(b: dict) -> tuple:
    return (int(b.get("level", 0)), int(b.get("created_at", 0)))


def by_anchor(blocks: Iterable[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for b in blocks:
        out.setdefault(b["anchor_message_id"], []).append(b)
    for lst in out.values():
        lst.sort(key=_pref, reverse=True)  # coarser, then newer, first
    return out


def referenced_ids(blocks: Iterable[dict]) -> set[str]:
    """Message ids whose current parent the chain check needs."""
    return {b["from_message_id"] for b in blocks}


def chain_ending_at(
    anchor_id: str, index: Mapping[str, list[dict]], parent_of: Mapping[str, str | None]
) -> list[dict] | None:
    """The intact chain of blocks (oldest first) whose last block ends at ``anchor_id``, or None.

    ``parent_of`` maps each block's ``from_message_id`` to its *current* parent (absent = deleted).
    """
    # Depth-first over candidate predecessors; chains are short (merging keeps them so).
    stack: list[tuple[dict, list[dict]]] = [(b, []) for b in reversed(index.get(anchor_id, ()))]
    while stack:
        block, after = stack.pop()
        fid = block["from_message_id"]
        cur = parent_of.get(fid, MISSING)
        if cur is MISSING or cur != block.get("from_parent_id"):
            continue
        chain = [block, *after]
        if block.get("from_parent_id") is None:
            return chain
        if len(chain) > 10_000:  # a cycle can only come from corrupted data
            continue
        stack.extend((pred, chain) for pred in reversed(index.get(block["from_parent_id"], ())))
    return None


def render_summary_text(chain: Sequence[dict]) -> str:
    """The rendered summary of a path (``conversations.summary``, seed 000)."""
    return "\n\n".join(b["text"] for b in chain if b.get("text"))


@dataclass(frozen=True)
class Thresholds:
    """Token-driven compaction (the numbers come from the model's window, see ``Policy``)."""

    keep_rounds: int  # rounds never summarised (the latest ones)
    trigger_tokens: int  # request size that triggers compaction
    limit: int  # window minus reserved output
    retain_tokens: int = 0  # verbatim tail kept after a cut (0 = half the limit)

    @property
    def retain(self) -> int:
        return self.retain_tokens or self.limit // 2


def cut_index(
    tail: Sequence[TailMsg], keep_rounds: int, *, retain_tokens: int | None = None
) -> int:
    """How many tail messages (from the oldest) may be summarised now.

    The cut lands right before a user message and never at or after a streaming row. Without
    ``retain_tokens`` it keeps exactly the last ``keep_rounds`` rounds (nothing to cut when there
    are fewer). With it, it keeps as many of the newest rounds as fit in ``retain_tokens``, but at
    least ``keep_rounds`` — fewer (never fewer than one) only when those alone are over the
    budget. 0 = nothing to summarise.
    """
    users = [i for i, m in enumerate(tail) if m.role == "user"]
    if not users:
        return 0
    rounds = max(1, keep_rounds)
    if retain_tokens is None:
        if len(users) < rounds:
            return 0
        cut = users[-rounds]
    else:
        suffix = [0] * (len(tail) + 1)
        for i in range(len(tail) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + tail[i].tokens
        k = min(rounds, len(users))
        while k > 1 and suffix[users[-k]] > retain_tokens:  # the minimum is over budget
            k -= 1
        while k < len(users) and suffix[users[-(k + 1)]] <= retain_tokens:  # room for more
            k += 1
        cut = users[-k]
    streaming = next((i for i, m in enumerate(tail) if m.status == "streaming"), None)
    if streaming is not None and cut > streaming:
        before = [i for i in users if i <= streaming]
        cut = before[-1] if before else 0
    return cut


@dataclass(frozen=True)
class Decision:
    needed: bool
    inline: bool
    reason: str
    cut: int


def decide(
    tail: Sequence[TailMsg],
    th: Thresholds,
    *,
    estimated_tokens: int,
    reported_tokens: int = 0,
    overflow: bool = False,
    manual: bool = False,
) -> Decision:
    """Whether to compact now, and whether it must happen before the model call (inline).

    Token-driven: compaction is needed once the request (provider-reported usage wins when it is
    larger) reaches ``trigger_tokens``; it then summarises the oldest unsummarised messages so
    the newest ``retain`` tokens stay verbatim — a 128k model keeps far more than an 8k one, and
    the window is used instead of being emptied to a few rounds. It runs after the turn, except
    when the unsummarised tail is larger than the whole window (``overflow``: the read had to
    stop), where it runs inline. Messages that are neither verbatim nor summarised yet are still
    reachable through recall. Manual compaction keeps only the latest round.
    """
    if manual:
        cut = cut_index(tail, 1)
        return Decision(cut > 0, False, "manual", cut)
    size = max(estimated_tokens, reported_tokens)
    if size < th.trigger_tokens and not overflow:
        return Decision(False, False, "below_trigger", 0)
    cut = cut_index(tail, th.keep_rounds, retain_tokens=th.retain)
    if cut <= 0:
        return Decision(False, False, "nothing_to_summarise", 0)
    if overflow:
        return Decision(True, True, "tail_exceeds_window", cut)
    return Decision(True, False, "tokens", cut)


def chunk_ranges(tokens: Sequence[int], max_tokens: int) -> list[tuple[int, int]]:
    """Split a range into consecutive [start, end) chunks of at most ``max_tokens`` each."""
    out: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(tokens):
        if i > start and used + n > max_tokens:
            out.append((start, i))
            start, used = i, 0
        used += n
    if start < len(tokens):
        out.append((start, len(tokens)))
    return out


def merge_plan(chain: Sequence[dict], budget: int) -> list[dict] | None:
    """The oldest blocks to fold into one coarser block when the chain is over ``budget``, or None.

    The folded block is asked for at most ``budget // 2`` tokens, so fold the fewest oldest blocks
    (at least two) that leave the rest within the other half; one pass normally suffices.
    """
    total = sum(int(b.get("tokens", 0)) for b in chain)
    if total <= budget or len(chain) < 2:
        return None
    rest = total
    for k in range(1, len(chain) + 1):
        rest -= int(chain[k - 1].get("tokens", 0))
        if k >= 2 and rest <= budget // 2:
            return list(chain[:k])
    return list(chain)


def prune_after_merge(
    blocks: Sequence[dict], merged: Sequence[dict], new_block: dict
) -> list[dict]:
    """The stored list after ``merged`` fold into ``new_block``.

    Folded blocks that another branch's chain still builds on stay (its chain needs them).
    """
    merged_ids = {b["id"] for b in merged}
    others = [b for b in blocks if b["id"] not in merged_ids]
    pos = {b["anchor_message_id"]: i for i, b in enumerate(merged)}
    keep_upto = -1
    for b in others:
        i = pos.get(b.get("from_parent_id"))
        if i is not None and i < len(merged) - 1:
            keep_upto = max(keep_upto, i)
    kept = list(merged[: keep_upto + 1])
    return [*others, *kept, new_block]

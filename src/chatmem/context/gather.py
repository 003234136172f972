"""Reading what context needs: the unsummarised tail of a path and the summary chain above it.

A turn never loads a whole conversation. It walks the active path from the leaf upwards a page at
a time and stops at the first message that ends an intact summary chain (everything above it is
covered by summaries), at the root, or — for assembly — once more tokens were read than the window
could ever hold. So the cost of a turn depends on the window and the unsummarised tail, not on how
many messages the conversation has. Compaction walks the same way without the token stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations import blocks as blk
from . import store
from . import summary as sm
from .tokens import MESSAGE_OVERHEAD

PAGE = 64


@dataclass
class PathRow:
    id: str
    parent_id: str | None
    role: str
    status: str
    text: str
    depth: int
    input_tokens: int
    context_tokens: int
    created_at: int = 0


@dataclass
class Tail:
    rows: list[PathRow]  # oldest first: the unsummarised messages that were read
    chain: list[dict] = field(default_factory=list)  # applicable summary blocks, oldest first
    complete: bool = True  # False when reading stopped on the token limit (a gap may remain)


async def path_page(c: AsyncConnection, conv_id: str, start: str, limit: int) -> list[PathRow]:
    """Up to ``limit`` messages from ``start`` towards the root, newest first."""
    rows = await store.path_page_rows(c, conv_id, start, limit)
    return [
        PathRow(
            r.id,
            r.parent_id,
            r.role,
            r.status,
            blk.visible_text(r.blocks),
            r.depth,
            r.input_tokens or 0,
            r.context_tokens or 0,
            int(r.created_at or 0),
        )
        for r in rows
    ]


async def current_parents(c: AsyncConnection, ids: set[str]) -> dict[str, str | None]:
    if not ids:
        return {}
    return await store.parents_of(c, ids)


async def _chain_above(
    c: AsyncConnection,
    conv_id: str,
    start: str | None,
    index: dict[str, list[dict]],
    parent_of: dict,
) -> list[dict]:
    """The deepest intact chain whose anchor is an ancestor of (or is) ``start``."""
    if start is None or not index:
        return []
    # Walk to the root: stored depths can be stale after a round deletion re-parented messages.
    found = await store.ancestors_among(c, conv_id, start, sorted(index))
    best: list[dict] = []
    best_depth = -1
    for anchor in found:
        chain = sm.chain_ending_at(anchor, index, parent_of)
        if chain:
            d = int(chain[-1].get("anchor_depth", 0))
            if d > best_depth:
                best, best_depth = chain, d
    return best


async def read_tail(
    c: AsyncConnection,
    conv_id: str,
    start: str | None,
    blocks: list[dict],
    *,
    count=None,
    max_tokens: int | None = None,
    page: int = PAGE,
    keep_start: bool = False,
    prime=None,
    known: list[PathRow] | None = None,
) -> Tail:
    """Walk up from ``start`` until an intact summary chain, the root, or ``max_tokens`` read.

    ``keep_start``: ``start`` itself is always returned, even when a summary ends at it (a turn
    answering a message inside a summarised range still sees that message verbatim).
    ``prime``: awaited with each page's texts before they are counted (``TokenCounter.prime``
    tokenises the long ones off the event loop).
    ``known``: the path's first rows from ``start`` up, newest first, when the caller has them
    (a turn that has just written its question as a root: the whole path) — read from there on
    only if they do not end at the root.
    """
    index = sm.by_anchor(blocks or [])
    parent_of = await current_parents(c, sm.referenced_ids(blocks or []))
    rows: list[PathRow] = []
    used = 0
    cur = start
    while cur is not None:
        if known and cur == start:
            batch = known
        else:
            batch = await path_page(c, conv_id, cur, page)
        if not batch:
            break
        if prime is not None:
            await prime([r.text for r in batch])
        for r in batch:
            if r.id in index:
                chain = sm.chain_ending_at(r.id, index, parent_of)
                if chain:
                    if keep_start and r.id == start:
                        return Tail([r], chain, True)
                    rows.reverse()
                    return Tail(rows, chain, True)
            rows.append(r)
            if max_tokens is not None:
                used += count(r.text) + MESSAGE_OVERHEAD
                if used > max_tokens:
                    rows.reverse()
                    chain = await _chain_above(c, conv_id, r.parent_id, index, parent_of)
                    return Tail(rows, chain, False)
        cur = batch[-1].parent_id
    rows.reverse()
    return Tail(rows, [], True)

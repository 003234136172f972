"""Finding a turn's recall candidates: the index queries behind ``recall.py``'s ranking and layout.

For the turn answering ``leaf_id`` (the newest user message): take the latest user message (and,
for a short follow-up, the turn before it) as the query, ask the full-text index of the scope —
this conversation, or all of the user's conversations in the same memory scope — for matching
messages, rank them with BM25 on the scope's own document frequencies, fuse with the vector index's
ranking when embeddings are configured, keep only messages on the path being answered (or, for
other conversations, ones the user may recall there), and attach each hit's neighbouring turn.
``assemble()`` then packs the groups around the verbatim tail.

Cost: a few index lookups whose work follows the number of *matching* messages of the scope, one
bounded row fetch, and a path check through ``PathCache`` (no walk to the root per turn).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from ..conversations.paths import PathCache
from ..cpu import run_text
from ..search import index, rank, store
from ..search import terms as tm
from ..search.df_memo import CountMemo
from . import recall as rc
from .assemble import HistoryItem

log = logging.getLogger(__name__)

SHORT_QUERY_TERMS = 3  # a follow-up with fewer content terms also queries the turn before it
FOLLOW_UP_WEIGHT = 0.35  # … at this weight
FOLLOW_UP_TURNS = 2  # the turns before it that a follow-up's query takes words from
MAX_RANKED_TERMS = 16  # rarest terms kept for the candidate query
#: A term's messages are counted up to here. Counting is what grows with a history (each count
#: reads up to this many index entries); a word in more messages is too common to find anything
#: by (it is left out of the candidate queries), and its BM25 weight is near its floor anyway.
DF_CAP = 500
#: … and the turn before's words (a follow-up's, which only weigh in) up to here, unless the
#: verbatim history tells their frequency: a long answer brings dozens, and a count of 100 is what
#: any word costs in a 100-message conversation.
WEAK_DF_CAP = 100
#: A word of the latest message in this share of the verbatim history (of at least
#: ``EVERYWHERE_SAMPLE`` messages) is not counted: it is everywhere.
EVERYWHERE_SHARE = 0.4
EVERYWHERE_SAMPLE = 10
#: Filler candidates fetched per wanted filler group: a function word's own ranking is weak (the
#: turn that matters may be its 200th message), the distinctiveness prior picks among them.
FILL_OVERSAMPLE = 4
FILL_PER_TERM_MAX = 250
FILL_GROUPS_MAX = 300
LINE_OVERHEAD = 6  # a recalled line's speaker, newline and "…" separator, roughly

#: (connection, conversation ids or None for the whole memory scope, limit) →
#: [(message id, similarity)], best first
VectorSearch = Callable[
    [AsyncConnection, Sequence[str] | None, int], Awaitable[list[tuple[str, float]]]
]


@dataclass(frozen=True)
class Options:
    scope: str = "conversation"  # conversation | memory_scope
    candidates: int = 40  # groups handed to the assembler, best first
    min_ratio: float = 0.2  # BM25 hits under this fraction of the best one are dropped
    config: str = "simple"  # PostgreSQL text search configuration
    fill: bool = True  # top up with turns sharing the question's function words (``fill_terms``)
    fill_to: int = 40  # … until this many groups in all (the service sizes it to the budget)


@dataclass
class Found:
    groups: list[rc.Group]
    info: dict
    header: str = rc.HEADER


def query_terms(history: Sequence[HistoryItem]) -> dict[str, float]:
    """The query's terms and their weights: the latest user message's at 1 (its longer words
    in their usual forms, ``terms.stemmed``: "volunteer" finds "volunteering"), and — when it is a
    short follow-up ("and the second one?") — the turn before it at ``FOLLOW_UP_WEIGHT``."""
    users = [i for i, h in enumerate(history) if h.role == "user"]
    if not users:
        return {}
    last = users[-1]
    weights = dict.fromkeys(map(tm.stemmed, tm.query_terms(history[last].text)), 1.0)
    if len(weights) < SHORT_QUERY_TERMS:
        for h in history[max(0, last - FOLLOW_UP_TURNS) : last]:
            for t in tm.query_terms(h.text):
                weights.setdefault(t, FOLLOW_UP_WEIGHT)
    return weights


def fill_groups(least: int, recall_tokens: int, history: Sequence[HistoryItem], count) -> int:
    """How many filler groups to aim for: as many single turns as the recall budget holds at
    this conversation's typical turn length (token-driven: a small window with short turns
    wants many, long turns few), never fewer than ``least``, at most ``FILL_GROUPS_MAX``."""
    sample = [count(h.text) for h in history[-64:]]
    turn = (sum(sample) / len(sample) if sample else 32) + LINE_OVERHEAD
    return max(least, min(FILL_GROUPS_MAX, int(recall_tokens / turn)))


def fill_terms(history: Sequence[HistoryItem], weights: Mapping[str, float]) -> list[str]:
    """The latest user message's function words ("what", "am", "i", "my" …): no use for finding
    what matters, but once the content words have found all they can, the turns that share them
    are still a better use of the recall budget than nothing (a paraphrased question — "which
    language am I studying?" for "I'm learning Swahili" — shares no content word with its answer,
    and first-person statements are where a person's facts are)."""
    users = [h for h in history if h.role == "user"]
    if not users:
        return []
    words = tm.query_terms(users[-1].text, keep_stopwords=True)
    return [t for t in words if t not in weights and tm.stemmed(t) not in weights]


def _scope(conv, opts: Options) -> list[str]:
    if opts.scope == "memory_scope" and not conv.workspace_id:
        return [tm.scope_token(conv.user_id), tm.scope_token(conv.agent_id)]
    return [tm.scope_token(conv.id)]


async def _lexical(
    c,
    owner,
    scope,
    weights: dict[str, float],
    fill: list[str],
    opts: Options,
    scope_size,
    sample,
    memo: CountMemo | None = None,
) -> tuple[list[index.Hit], list[index.Hit], dict, int]:
    """(candidates, filler candidates, document frequencies, scope size): for each of the
    most telling terms of the latest message (rarest first; the turn before only when the
    message has none of its own), its best messages in the scope; then the same for its
    function words (``fill_terms``). Words so common their count hit the cap only help when
    nothing rarer matched: their candidate lists would cost the most and say the least.

    Counting a word reads up to ``DF_CAP`` index entries — what grew most from 100 to 10,000
    messages on PostgreSQL — so some frequencies are estimated instead (``_guessed``), the
    turn before's other words are counted only up to ``WEAK_DF_CAP``, and a common word's count
    made in an earlier turn is reused while it is still good (``memo``, ``search/df_memo.py``)."""
    if not weights and not fill:
        return [], [], {}, 0
    df, n_docs, exact, caps = await _counts(c, scope, weights, fill, opts, scope_size, sample, memo)
    own = [t for t in weights if weights[t] >= 1.0 and df.get(t)]
    present = own or [t for t in weights if df.get(t)]
    present.sort(key=lambda t: (df[t], t))
    telling = [t for t in present if df[t] < caps.get(t, DF_CAP)]
    present = (telling or present)[:MAX_RANKED_TERMS]
    ids = []
    if present:
        per_term = max(10, opts.candidates * 4 // len(present))
        ids = await _match(c, scope, owner, opts, present, per_term, exact)
    common = sorted(
        (t for t in fill if 0 < df.get(t, 0) < caps.get(t, DF_CAP)),
        key=lambda t: df[t],
    )
    extra = []
    if common and opts.fill:
        common = common[:MAX_RANKED_TERMS]
        per_term = max(10, min(FILL_PER_TERM_MAX, opts.fill_to * FILL_OVERSAMPLE // len(common)))
        extra = await _match(c, scope, owner, opts, common, per_term, exact)
    return ids, extra, df, n_docs


async def _counts(
    c, scope, weights: dict[str, float], fill: list[str], opts: Options, scope_size, sample, memo
) -> tuple[dict, int, dict[str, int], dict[str, int]]:
    """(document frequencies, scope size, the counts made exactly in this transaction, the
    per-term count caps) of ``_lexical``'s terms: estimated (``_guessed``), kept from an earlier
    turn (``memo``) or counted now, up to ``DF_CAP`` (``WEAK_DF_CAP`` for the turn before's words)."""
    guessed = _guessed(weights, fill, scope_size, sample)
    follow_up = [t for t, w in weights.items() if w < 1.0]
    caps = {t: WEAK_DF_CAP for t in follow_up if t not in guessed}
    wanted = [t for t in [*weights, *fill] if t not in guessed]
    key = (opts.config, *scope)
    kept = {}
    if memo is not None and scope_size:
        for t in wanted:
            got = memo.get(key, t, cap=caps.get(t, DF_CAP), size=scope_size)
            if got is not None:
                kept[t] = got
    n_docs, df = await index.frequencies(
        c,
        scope,
        [t for t in wanted if t not in kept],
        scope_size=scope_size,
        config=opts.config,
        cap=DF_CAP,
        caps=caps,
    )
    # counted just now, below the cap: exact in this transaction (a kept or guessed one is not)
    exact = {t: n for t, n in df.items() if n < caps.get(t, DF_CAP)}
    if memo is not None and scope_size:
        for t, n in df.items():
            memo.put(key, t, n, cap=caps.get(t, DF_CAP), size=scope_size)
    df.update(kept)
    n_docs = max(n_docs, *kept.values()) if kept else n_docs
    df.update(guessed)
    return df, n_docs, exact, caps


async def _match(c, scope, owner, opts: Options, terms, per_term: int, exact) -> list[index.Hit]:
    """Each term's best ``per_term`` messages in the scope (unranked when all of them fit)."""
    whole = _all_fit(terms, exact, per_term)
    return await index.match_each(
        c, scope, terms, per_term=per_term, owner=owner, config=opts.config, whole=whole
    )


def _all_fit(terms, exact: Mapping[str, int], per_term: int) -> set[str]:
    """The terms whose every message is among the ``per_term`` asked for (``index.match_each``
    then reads them unranked: the ranking of a bm25 or ts_rank ORDER BY would change nothing)."""
    return {t for t in terms if t in exact and exact[t] <= per_term}


def _guessed(weights, fill, scope_size, sample: Sequence[str]) -> dict[str, int]:
    """Frequencies in a conversation estimated from ``sample`` (the verbatim history without the
    turns the query comes from, ``rank.sampled_df``): of the function words and the turn
    before's words when it holds them, of the latest message's own words only when they are in
    ``EVERYWHERE_SHARE`` of it — a word that common finds nothing, and the words a hit is found
    by (rare ones, maybe said only long ago) are counted exactly."""
    if not scope_size:
        return {}
    weak = [*(t for t, w in weights.items() if w < 1.0), *fill]
    out = rank.sampled_df(sample, weak, scope_size)
    if len(sample) >= EVERYWHERE_SAMPLE:
        own = [t for t, w in weights.items() if w >= 1.0]
        least = math.ceil(EVERYWHERE_SHARE * len(sample))
        out.update(rank.sampled_df(sample, own, scope_size, least=least))
    return out


async def find(
    c: AsyncConnection,
    *,
    conv,
    leaf_id: str,
    history: Sequence[HistoryItem],
    paths: PathCache,
    opts: Options,
    vectors: VectorSearch | None = None,
    counts: CountMemo | None = None,
) -> Found:
    """Recall candidates for the turn answering ``leaf_id`` (see the module docstring);
    ``counts``: the process's memo of common words' counts (``search/df_memo.py``)."""
    t0 = time.perf_counter()
    weights = query_terms(history)
    fill = fill_terms(history, weights)
    scope = _scope(conv, opts)
    info: dict = {"scope": opts.scope if len(scope) > 1 else "conversation", "terms": weights}
    size = int(conv.message_count or 0) if len(scope) == 1 else None  # this conversation
    sample = [h.text for h in history[: -1 - FOLLOW_UP_TURNS]]  # not the query's own turns
    found, extra, df, n_docs = await _lexical(
        c, conv.user_id, scope, weights, fill, opts, size or None, sample, counts
    )
    hits = list({h.id: h for h in [*found, *extra]}.values())
    path = await paths.get(c, conv.id, leaf_id)
    hits = await _allowed(c, conv, hits, path, leaf_id, len(scope) > 1)
    by_id = {h.id: h for h in hits}
    docs = {h.id: h.text for h in hits}
    # tokenising and scoring hundreds of candidates takes milliseconds: on the text pool
    lexical = await run_text(_lexical_rank, docs, weights, df, n_docs, opts.min_ratio)
    ranked_lists = [lexical]
    if vectors is not None:
        ranked_lists.append(await _vector_ids(c, conv, vectors, path, opts, by_id, leaf_id))
    fused = rc.fuse(*ranked_lists)[: opts.candidates]
    hits_only = len(fused)
    if extra and len(fused) < opts.fill_to:
        broad = await run_text(_fill_rank, docs, weights, fill, df, n_docs, history)
        fused = rc.top_up(fused, broad, opts.fill_to)
        info["fill_terms"] = fill
    groups = await _groups(c, conv, fused, by_id, path, {mid for mid, _ in fused[hits_only:]})
    info["candidates"] = len(hits)
    info["ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return Found(groups, info, rc.HEADER_CROSS if len(scope) > 1 else rc.HEADER)


def _lexical_rank(docs, weights, df, n_docs: int, min_ratio: float) -> list[str]:
    """BM25 of the candidates against the weighted terms, the relevant ids best first."""
    scored = rank.bm25(docs, list(weights), df, n_docs, weights=weights)
    own = {t for t, w in weights.items() if w >= 1.0 and t not in tm.STOPWORDS}
    if own:  # the turn before only sharpens a follow-up: a hit must match the message itself
        scored = [x for x in scored if any(tm.occurs(t, docs[x.id]) for t in own)]
    return rc.keep_relevant([(s.id, s.score) for s in scored], min_ratio)


def _fill_rank(docs, weights, fill, df, n_docs: int, history) -> list[str]:
    """The candidates by BM25 over all the question's words (function words too), each score
    scaled by the turn's distinctiveness (``rank.distinctive``, against the candidates and the
    verbatim history): among the hundreds of turns that share "I" or "am" with the question,
    the ones that say something specific first."""
    scored = rank.bm25(docs, [*weights, *fill], df, n_docs, weights=weights)
    prior = rank.distinctive(docs, {h.id: h.text for h in history})
    # ``scored`` is already newest first among equals: a stable sort keeps that on ties
    scored.sort(key=lambda x: -x.score * (1 + prior.get(x.id, 0)))
    return [x.id for x in scored]


async def _allowed(c, conv, hits, path, leaf_id: str, cross: bool) -> list[index.Hit]:
    """Hits of this conversation must be on the answered path (not the question itself); hits of
    other conversations must be recallable from here."""
    others = {h.conversation_id for h in hits if h.conversation_id != conv.id}
    ok = (
        await store.recallable(c, conv.user_id, others, conv.agent_id)
        if cross and others
        else set()
    )
    out = []
    for h in hits:
        if h.conversation_id == conv.id:
            if h.id in path and h.id != leaf_id:
                out.append(h)
        elif h.conversation_id in ok:
            out.append(h)
    return out


async def _vector_ids(c, conv, vectors, path, opts, by_id, leaf_id) -> list[str]:
    """The vector index's ranking, restricted like the lexical hits (rows fetched as needed)."""
    cross = opts.scope == "memory_scope" and not conv.workspace_id
    try:
        found = await vectors(c, None if cross else [conv.id], opts.candidates * 2)
    except Exception:  # vectors must never break a turn: full text still answers
        log.exception("vector recall failed")
        return []
    missing = [mid for mid, _ in found if mid not in by_id]
    extra = await index.rows(c, conv.user_id, missing)
    for h in await _allowed(c, conv, extra, path, leaf_id, cross):
        by_id[h.id] = h
    return [mid for mid, _ in found if mid in by_id]


def _recalled(h: index.Hit) -> rc.Recalled:
    return rc.Recalled(h.id, h.role, h.text, h.created_at, h.conversation_id)


async def _groups(c, conv, fused, by_id, path, alone: set[str]) -> list[rc.Group]:
    """Each hit with its neighbouring turn, except the ``alone`` ones (filler: too weak a match
    to spend a second message on)."""
    neighbour: dict[str, str | None] = {}
    for mid, _ in fused:
        h = by_id[mid]
        if mid in alone:
            neighbour[mid] = None
        elif h.conversation_id == conv.id:
            neighbour[mid] = path.neighbour(mid, h.role)
        else:
            neighbour[mid] = h.parent_id if h.role == "assistant" else None
    need = [n for n in neighbour.values() if n and n not in by_id]
    for h in await index.rows(c, conv.user_id, need):
        by_id[h.id] = h
    wanted = {*neighbour, *(n for n in neighbour.values() if n)}
    messages = {mid: _recalled(h) for mid in wanted if (h := by_id.get(mid)) and h.text.strip()}
    return rc.group(fused, messages, neighbour)

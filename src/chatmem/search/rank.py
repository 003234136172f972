"""BM25 over a bounded candidate set, the same on both databases (pure).

Why in Python: SQLite's FTS5 has BM25 but PostgreSQL has none (``ts_rank`` ignores how rare a word
is), and search and recall must rank alike on both. The engines only pre-select candidates; the
document frequencies come from the index (``index.frequencies``): for recall those of the scope
being searched (a conversation, or a user's history), so a word that is everywhere in *this*
conversation weighs little even if it is rare elsewhere; for search those of the whole index
(capped counts, whose cost does not grow with a user's history). Term frequencies and lengths
come from the candidate texts, tokenised exactly as the index does (``terms.bag``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import terms as tm

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Scored:
    id: str
    score: float


def idf(df: int, n_docs: int) -> float:
    """BM25's idf, floored at a small positive value (a word in every message still counts a bit)."""
    n_docs = max(n_docs, df, 1)
    return max(math.log(1 + (n_docs - df + 0.5) / (df + 0.5)), 1e-3)


def bm25(
    docs: Mapping[str, str],
    query: Sequence[str],
    df: Mapping[str, int],
    n_docs: int,
    *,
    avgdl: float | None = None,
    prefix_last: bool = False,
    weights: Mapping[str, float] | None = None,
) -> list[Scored]:
    """Score each ``docs`` id → text against ``query`` terms; best first, ties by id descending
    (ids are time-ordered, so the newer message wins a tie). Texts matching no term score 0 and
    are left out. A forms term (``terms.FORMS``) counts every form of its word;
    ``prefix_last``: words starting with the last term count as that term;
    ``weights`` scales each query term (1 when absent)."""
    wanted = list(dict.fromkeys(query))
    last = query[-1] if prefix_last and query else None
    # every word a query term stands for (a forms term: each of its forms) → the terms it counts
    # for: a text's frequencies are then the few words it shares with the query, found by one
    # set intersection, not a lookup per query term and form
    counted_as: dict[str, list[str]] = {}
    for q in wanted:
        for f in tm.forms(q):
            counted_as.setdefault(f, []).append(q)
    words = counted_as.keys()
    tokenised: dict[str, dict[str, int]] = {}
    lengths: dict[str, int] = {}
    for i, txt in docs.items():
        b = tm.bag(txt)
        tf: dict[str, int] = {}
        for w in words & b.counts.keys():
            for q in counted_as[w]:
                tf[q] = tf.get(q, 0) + b.counts[w]
        if last is not None:
            more = sum(n for w, n in b.counts.items() if w != last and w.startswith(last))
            if more:
                tf[last] = tf.get(last, 0) + more
        tokenised[i], lengths[i] = tf, b.length
    if avgdl is None:
        avgdl = (sum(lengths.values()) / len(lengths)) if lengths else 1.0
    avgdl = max(avgdl, 1.0)
    qw = {
        q: idf(int(df.get(q, 0)), n_docs) * (weights.get(q, 1.0) if weights else 1.0)
        for q in dict.fromkeys(query)
    }
    place = {q: n for n, q in enumerate(qw)}
    out = []
    for i, tf in tokenised.items():
        norm = K1 * (1 - B + B * lengths[i] / avgdl)
        s = 0.0
        # the text's few query terms (not every term of the query), summed in the query's order
        for q in sorted(tf, key=place.__getitem__) if len(tf) > 1 else tf:
            n = tf[q]
            s += qw[q] * n * (K1 + 1) / (n + norm)
        if s > 0:
            out.append(Scored(i, s))
    out.sort(key=lambda x: x.id, reverse=True)  # ties: the later id first (a stable sort keeps
    out.sort(key=lambda x: -x.score)  # it under the score order)
    return out


def distinctive(docs: Mapping[str, str], background: Mapping[str, str]) -> dict[str, int]:
    """For each ``docs`` id: how many of its content words (stop words aside) occur in no other
    text of ``docs`` and ``background`` (id → text; an id in both counts once).

    A query-independent prior: chatter is made of words said again and again ("the weather",
    "sounds nice"), while a turn that states a fact names something said once (a place, a name,
    a number, "Swahili"). Cheap: one pass over texts that are already loaded, no index lookups.
    """
    seen: Counter[str] = Counter()
    words = {i: tm.content_terms(txt) for i, txt in docs.items()}
    for ws in words.values():
        seen.update(ws)
    for i, txt in background.items():
        if i not in docs:
            seen.update(tm.content_terms(txt))
    return {i: sum(1 for w in ws if seen[w] == 1) for i, ws in words.items()}


def sampled_df(
    sample: Sequence[str], terms: Iterable[str], n_docs: int, *, least: int = 2
) -> dict[str, int]:
    """Document frequencies of ``terms`` in a scope of ``n_docs`` messages, estimated from
    ``sample`` (texts of that scope): a term in ``k`` of the ``s`` sampled texts is in about
    ``k / s × n_docs`` messages (never fewer than ``k``). Only terms found in at least ``least``
    sampled texts are estimated — a rarer term's estimate would be noise, and counting it in
    the index is cheap (a count reads one index entry per message holding the term).

    For words spread evenly through a conversation — the function words of a question — the
    verbatim history is a fair sample, already loaded: their counts cost nothing instead of
    hundreds of index entries each."""
    wanted = set(terms)
    if not sample or not wanted:
        return {}
    prefixes = {t for t in wanted if t.endswith(tm.FORMS)}
    seen: Counter[str] = Counter()
    whole = wanted - prefixes
    for txt in sample:
        b = tm.bag(txt)
        seen.update(whole.intersection(b.counts))
        seen.update(t for t in prefixes if b.has(t))
    scale = max(n_docs, 1) / len(sample)
    return {t: max(k, round(k * scale)) for t, k in seen.items() if k >= least}

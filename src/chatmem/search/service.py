"""Search use-case: the caller's matching conversation titles (8) and messages (40), best first.

Messages come from the full-text index: every word of the query must occur (the last one may be
the start of a word, so results appear while typing), Chinese and Japanese runs match by character
bigrams. To keep the cost flat however long the history grows, the index hands over the newest
``CANDIDATES`` matches, which are ranked by BM25 with the index's document frequencies (capped
counts over every user's messages, so they cost the same however large the index); ties go to
the newer message. Archived conversations, inline threads and workspace rows are left out, as
in seed 001 — unless the search is scoped to a workspace (issue 16): then it covers exactly the
workspace's conversations the member may see (``is_public`` rules), whoever wrote them, and
nothing personal.
"""

from __future__ import annotations

import asyncio

from ..auth.models import Principal
from ..cpu import run_text
from ..db.engine import Database
from ..errors import BadRequest
from ..workspaces import store as wstore
from . import index, rank, store
from . import terms as tm
from . import text as st

MESSAGE_LIMIT = 40
CANDIDATES = 400


async def _scope(c, p: Principal, workspace_id: str) -> tuple[tm.Scope, dict[str, str] | None]:
    """(the index scope, and in a workspace the {id: title} of its conversations the caller may
    see). A non-member's workspace is a 404."""
    if not workspace_id:
        return [tm.scope_token(p.id)], None
    await wstore.get_for_member(c, p.id, workspace_id)
    allowed = await store.workspace_titles(c, p.id, workspace_id)
    return ([tuple(tm.scope_token(i) for i in allowed)] if allowed else []), allowed


async def search(
    db: Database, p: Principal, q: str, *, config: str = "simple", workspace_id: str = ""
) -> dict:
    """Personal search, or with ``workspace_id`` what the member may see of that workspace."""
    query = st.clean_query(q)
    if query is None:
        raise BadRequest(
            f"the query must be at least {st.MIN_QUERY} characters", code="query_too_short"
        )
    terms = tm.query_terms(query, keep_stopwords=True)
    # a query that ends inside a word may be unfinished: its last word also matches as a prefix
    prefix = bool(terms) and query[-1].isalnum() and query.lower().endswith(terms[-1])
    async with db.read() as c:
        scope, allowed = await _scope(c, p, workspace_id)
        # titles on a second connection while this one reads the message index: the two do not
        # depend on each other, and a user with 10,000 conversations makes the title scan take
        # as long as the messages (SQLite and asyncpg both run them at once, in their threads
        # or server processes)
        conversations, messages = await asyncio.gather(
            _titles(db, p.id, query, workspace_id),
            _messages(
                c, p.id, None if workspace_id else p.id, scope, allowed, terms, prefix, config
            )
            if terms and scope
            else _none(),
        )
    return {"query": query, "conversations": conversations, "messages": messages}


async def _titles(db: Database, user_id: str, query: str, workspace_id: str) -> list[dict]:
    async with db.read() as c:
        return await store.titles(c, user_id, query, workspace_id)


async def _none() -> list[dict]:
    return []


async def _frequencies(c, scope, terms: list[str], prefix: bool, config: str, known: index.Common):
    """(n_docs, df) for BM25. Every candidate has every word: the frequencies only weigh the
    words against each other, so the user's history size need not be counted — and one word
    needs none (its idf is the same positive factor for every candidate: the order is that of
    its term frequencies and lengths), so single words skip it. The counts are over the whole
    index (``scoped=False``): capped, they cost the same at 10k and 1M messages, where
    intersecting each word with the user's scope read the user's million index entries. An idf
    from every user's messages weighs words as well as the user's own (only counts leave the
    database). A word PostgreSQL's statistics show everywhere (``known``) is not counted: its
    capped count is ``DF_CAP``, and counting it would build GIN's bitmap of every match."""
    if len(set(terms)) < 2:
        return 0, dict[str, int]()
    df = {x: index.DF_CAP for x in terms if known.everywhere(x)}
    rest = [x for x in terms if x not in df]
    if not rest:
        return index.SCOPE_CAP, df
    n_docs, counted = await index.frequencies(
        c,
        scope,
        rest,
        scope_size=index.SCOPE_CAP,
        prefix_last=prefix and rest[-1] == terms[-1],
        config=config,
        cap=index.DF_CAP,
        scoped=False,
    )
    return n_docs, {x: df.get(x, counted.get(x, 0)) for x in terms}


async def _messages(c, user_id, owner, scope, allowed, terms, prefix, config) -> list[dict]:
    """The ranked message hits: the newest ``CANDIDATES`` matches, ranked by BM25. ``owner``
    (personal search: the caller) lets the index try the words alone (``index.match``)."""
    known = await index.common(c, terms, config=config)
    n_docs, df = await _frequencies(c, scope, terms, prefix, config, known)
    asked = _narrowed(terms, df) if index.words_checkable(c, config) else terms
    as_prefix = prefix and asked[-1] == terms[-1]
    if as_prefix and known.everywhere(asked[-1]):
        as_prefix = False
    elif as_prefix and df.get(asked[-1], index.DF_CAP) >= index.DF_CAP:
        # a last word already in DF_CAP messages as a whole word is asked as that word, not as
        # a prefix: the engines answer a prefix by merging the entries of every word it starts
        # (SQLite FTS5 all of them before the first result — "garden*" read 600k entries,
        # 290 ms at 1M, against 4 ms for "garden"), and the word alone fills the newest
        # CANDIDATES anyway. Longer words it starts still count in BM25 among those.
        as_prefix = not await index.everywhere(c, asked[-1], config=config)
    hits, titles = await _candidates(
        c, user_id, owner, scope, allowed, asked, as_prefix, config, known.share_of_all(asked)
    )
    if asked != terms:
        hits = [h for h in hits if tm.has_all(h.text, terms, prefix_last=prefix)]
    hits = [h for h in hits if h.conversation_id in titles]
    # BM25 and snippets over up to 400 candidates take milliseconds: on the text pool
    return await run_text(_ranked, hits, terms, df, n_docs, titles, prefix)


async def _candidates(c, user_id, owner, scope, allowed, asked, as_prefix, config, share):
    """(the newest ``CANDIDATES`` messages with every asked word, {conversation id: title} of
    the conversations they may show): personal search in one read with the conversations
    (``index.newest_hits``), a workspace's from the index and its allowed conversations."""
    if owner is not None:
        return await index.newest_hits(
            c,
            owner,
            asked,
            prefix_last=as_prefix,
            limit=CANDIDATES,
            config=config,
            share=share,
        )
    ids = await index.match(
        c,
        scope,
        asked,
        all_terms=True,
        prefix_last=as_prefix,
        newest_first=True,
        limit=CANDIDATES,
        config=config,
    )
    return await index.rows(c, user_id, ids, conversations=allowed), allowed


def _narrowed(terms: list[str], df: dict[str, int]) -> list[str]:
    """The words to ask the index for: without those in ``DF_CAP`` messages or more when a rarer
    word is left (they are checked on the candidates' text instead, ``terms.has_all``).

    Why: the index intersects a word everywhere (a doclist of 600k entries at 1M messages) with a
    rare one by seeking through the common one's entries, which cost 4× the rare word alone at
    1M (bench/search.py, "two words"). A word in that many messages is in most of the rare
    word's too, so the newest ``CANDIDATES`` matches of the rare words, filtered, serve as the
    candidates; the common word still weighs in BM25."""
    narrow = [t for t in terms if df.get(t, 0) < index.DF_CAP]
    return narrow or terms


def _ranked(hits, terms, df, n_docs, titles, prefix: bool) -> list[dict]:
    by_id = {h.id: h for h in hits}
    scored = rank.bm25({h.id: h.text for h in hits}, terms, df, n_docs, prefix_last=prefix)
    order = [s.id for s in scored] + sorted(set(by_id) - {s.id for s in scored}, reverse=True)
    out = []
    for mid in order[:MESSAGE_LIMIT]:
        h = by_id[mid]
        out.append(
            {
                "id": h.id,
                "conversation_id": h.conversation_id,
                "conversation_title": titles[h.conversation_id],
                "role": h.role,
                "created_at": h.created_at,
                "snippet": st.snippet(h.text, terms),
            }
        )
    return out

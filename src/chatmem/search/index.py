"""The message index's queries (SQL): matching ids, document frequencies and scope sizes.

One store for both engines — SQLite FTS5 (``messages_fts`` + ``messages_fts_ids``) and PostgreSQL
(``messages.search_tsv``, GIN) — behind the same three questions, so search and recall share one
code path and one ranking (``search/rank.py``, in Python, identical on both databases):

- ``frequencies`` — how many messages of a scope contain each term, and how many it has (BM25's
  document frequencies);
- ``match`` — ids of the messages of a scope that contain any (or all) of the terms, either the
  engine's best first (FTS5's bm25, PostgreSQL's ts_rank: a pre-ranking of a bounded candidate
  set) or the newest first (a bound whose cost does not grow with the history);
- ``rows`` — the candidates' text and position, always re-checked against the owner.

A **scope** is a list of index tokens that every result must carry (``terms.scope_token`` of a
user id, a conversation id, an agent id or ``noagent``). The owner check in ``rows`` is a second,
independent guard: whatever the index returns, only the caller's messages come back.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy import bindparam, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from ..db import schema as t
from . import store
from . import terms as tm

M = t.messages.c


@dataclass(frozen=True)
class Hit:
    """A candidate message as ranking and packing need it."""

    id: str
    conversation_id: str
    parent_id: str | None
    role: str
    text: str
    created_at: int
    depth: int


def _is_sqlite(c: AsyncConnection) -> bool:
    return c.dialect.name == "sqlite"


def words_checkable(c: AsyncConnection, config: str) -> bool:
    """Whether ``terms.has_all`` on a message's text agrees with the index's match: on SQLite
    (FTS5's unicode61 words, as ``terms.doc_terms``) and PostgreSQL's ``simple`` configuration;
    a stemming configuration matches words the text does not hold verbatim."""
    return _is_sqlite(c) or config == "simple"


def _ids_of(fts_rowids: str) -> str:
    """Message ids for a query of FTS rowids (column ``r``), in its order. The FTS query runs on
    its own: joined directly, SQLite may give up FTS5's own ordering and early stop."""
    return (
        f"SELECT i.message_id AS id FROM ({fts_rowids}) f CROSS JOIN messages_fts_ids i "
        "ON i.rid = f.r"
    )


def _token_ok(s) -> bool:
    if isinstance(s, tuple):
        return bool(s) and all(x and x.isalnum() for x in s)
    return bool(s) and s.isalnum()


def _check_scope(scope: tm.Scope) -> None:
    if not scope or not all(_token_ok(s) for s in scope):
        raise ValueError(f"invalid index scope {scope!r}")


#: Document frequencies are counted up to here: a word in more messages than this weighs next to
#: nothing in BM25 anyway, and the count must not cost more as a history grows.
DF_CAP = 2000
#: A scope's size is counted up to here when the caller does not know it.
SCOPE_CAP = 50_000


def _capped_sqlite(i: int) -> str:
    return (
        f"(SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH :q{i} "
        f"LIMIT :cap{i}))"
    )


def _capped_pg(i: int, query: str) -> str:
    return (
        f"(SELECT count(*) FROM (SELECT 1 FROM messages WHERE search_tsv @@ {query} "
        f"LIMIT :cap{i}) s{i})"
    )


async def frequencies(
    c: AsyncConnection,
    scope: tm.Scope,
    terms: Sequence[str],
    *,
    scope_size: int | None = None,
    prefix_last: bool = False,
    config: str = "simple",
    cap: int = DF_CAP,
    caps: Mapping[str, int] | None = None,
    scoped: bool = True,
) -> tuple[int, dict[str, int]]:
    """(messages in the scope, {term: messages in the scope containing it}), each count capped
    (``cap``, or the term's own in ``caps``; ``SCOPE_CAP``) so the cost does not grow with the
    history; ``scope_size`` skips counting the scope. With ``prefix_last`` the last term counts
    the messages containing a word that starts with it. One statement.

    ``scoped=False`` counts each term over the whole index instead (every user's messages: only
    counts leave the database). It costs at most ``cap`` index entries per term, whereas the
    scoped count intersects the term with the scope's entries — for a user with a million
    messages a million of them, whose reading is what grows (bench/search.py)."""
    _check_scope(scope)
    terms = [x for x in terms if tm.searchable(x)]
    last = len(terms) - 1 if prefix_last else -1
    sqlite = _is_sqlite(c)
    params: dict = {"s": tm.scope_tsquery(scope), "cfg": config}
    cols = []
    if scope_size is None:
        params.update(q0=tm.fts5_scope(scope), cap0=SCOPE_CAP)
        cols.append(_capped_sqlite(0) if sqlite else _capped_pg(0, "CAST(:s AS tsquery)"))
    within = scope if scoped else []
    for i, term in enumerate(terms, start=1):
        params[f"cap{i}"] = (caps or {}).get(term, cap)
        if sqlite:
            params[f"q{i}"] = tm.fts5_match([term], within, prefix_last=i - 1 == last)
            cols.append(_capped_sqlite(i))
        else:
            params[f"q{i}"] = tm.tsquery([term], prefix_last=i - 1 == last)
            q = f"to_tsquery(CAST(:cfg AS regconfig), :q{i})"
            cols.append(_capped_pg(i, f"(CAST(:s AS tsquery) && {q})" if scoped else q))
    if not cols:
        return int(scope_size or 0), {}
    row = (await c.execute(text("SELECT " + ", ".join(cols)), params)).one()
    counts = [int(x) for x in row]
    n = int(scope_size) if scope_size is not None else counts.pop(0)
    df = dict(zip(terms, counts, strict=True))
    return max(n, max(df.values(), default=0)), df


#: A term is taken as in ``DF_CAP`` messages or more from PostgreSQL's statistics alone when they
#: estimate this many times that: a margin for the sample's error and for statistics a little
#: stale (ANALYZE runs after a share of the table changed, so a word's share moves slowly).
STATS_MARGIN = 4


@dataclass(frozen=True)
class Common:
    """What PostgreSQL's statistics say about some terms: the share of messages that hold each
    term ANALYZE found common (terms not listed are rarer: nothing is known of them)."""

    rows: int = 0
    share: dict[str, float] = field(default_factory=dict)

    def everywhere(self, term: str) -> bool:
        """Whether ``term`` is surely in ``DF_CAP`` messages or more (``STATS_MARGIN``)."""
        return self.share.get(term, 0.0) * self.rows >= STATS_MARGIN * DF_CAP

    def share_of_all(self, terms: Sequence[str]) -> float | None:
        """The estimated share of messages holding every term (as if independent), or None
        when one of them is not listed."""
        if not terms or any(x not in self.share for x in terms):
            return None
        return math.prod(self.share[x] for x in terms)


#: ANALYZE's most common lexemes of ``search_tsv`` (``pg_stats.most_common_elems``, with the
#: share of non-null rows holding each) among the asked terms, and the table's estimated rows.
_COMMON_PG = (
    "SELECT e.elem, e.freq * (1 - s.null_frac) AS share, c.reltuples FROM pg_stats s "
    "CROSS JOIN LATERAL unnest(CAST(CAST(s.most_common_elems AS text) AS text[]), "
    "s.most_common_elem_freqs) AS e(elem, freq) "
    "CROSS JOIN pg_class c "
    "WHERE s.schemaname = current_schema() AND s.tablename = 'messages' "
    "AND s.attname = 'search_tsv' AND c.oid = CAST('messages' AS regclass) "
    "AND e.elem = ANY(:terms)"
)


async def common(c: AsyncConnection, terms: Sequence[str], *, config: str = "simple") -> Common:
    """PostgreSQL's statistics for ``terms`` (one catalog read, the same cost at any size); on
    SQLite, or when the text is stemmed (a term is then not its lexeme), nothing is known.

    Why: a capped count (``frequencies``, ``everywhere``) does not stop early on PostgreSQL —
    GIN builds the bitmap of every match before the first row, 600,000 of them for a word in
    20 % of a million messages (0.5 s). ANALYZE already keeps the share of the most common
    lexemes, which is exactly what is needed to know a word is everywhere."""
    terms = [x for x in terms if x.isalnum()]
    if _is_sqlite(c) or config != "simple" or not terms:
        return Common()
    found = (await c.execute(text(_COMMON_PG), {"terms": terms})).all()
    if not found:
        return Common()
    return Common(int(max(r[2] for r in found)), {r[0]: float(r[1]) for r in found})


async def everywhere(c: AsyncConnection, word: str, *, config: str = "simple") -> bool:
    """Whether the whole word ``word`` is in ``DF_CAP`` messages or more, over the whole index
    (a count that stops at ``DF_CAP``: it costs the same however large the index)."""
    if not word.isalnum():
        return False
    if _is_sqlite(c):
        sql, q = _capped_sqlite(0), tm.fts5_match([word], [])
    else:
        sql, q = _capped_pg(0, "to_tsquery(CAST(:cfg AS regconfig), :q0)"), tm.tsquery([word])
    params = {"q0": q, "cap0": DF_CAP, "cfg": config}
    return int((await c.execute(text("SELECT " + sql), params)).scalar_one()) >= DF_CAP


async def match(
    c: AsyncConnection,
    scope: tm.Scope,
    terms: Sequence[str],
    *,
    all_terms: bool = False,
    prefix_last: bool = False,
    newest_first: bool = False,
    limit: int = 200,
    config: str = "simple",
    owner: str | None = None,
    share: float | None = None,
) -> list[str]:
    """Ids of scope messages containing any (``all_terms``: every) term, at most ``limit``.

    ``prefix_last`` lets the last term match as a prefix (search as you type). Order: the
    engine's relevance, or the newest first with ``newest_first``. ``owner`` (the user whose
    token is the scope, newest first only) first tries the owner's newest messages when
    ``share`` (the estimated share of messages holding the terms, ``Common.share_of_all``) is
    large (``_walk_owner``, PostgreSQL), then the words alone (``_newest_of_owner``).
    """
    _check_scope(scope)
    terms = [x for x in terms if x.isalnum()]
    if not terms:
        return []
    if owner is not None and newest_first:
        if share and all_terms and not _is_sqlite(c):
            q = tm.tsquery(terms, all_terms=True, prefix_last=prefix_last)
            found = await _walk_owner(c, owner, q, share, limit, config)
            if found is not None:
                return found
        found = await _newest_of_owner(c, owner, terms, all_terms, prefix_last, limit, config)
        if found is not None:
            return found
    if _is_sqlite(c):
        expr = tm.fts5_match(terms, scope, all_terms=all_terms, prefix_last=prefix_last)
        order = "rowid DESC" if newest_first else "bm25(messages_fts, 1.0, 1.0, 0.0)"
        sql = _ids_of(
            f"SELECT rowid AS r FROM messages_fts WHERE messages_fts MATCH :q "
            f"ORDER BY {order} LIMIT :lim"
        )
        return list((await c.execute(text(sql), {"q": expr, "lim": limit})).scalars().all())
    q = "(CAST(:s AS tsquery) && to_tsquery(CAST(:cfg AS regconfig), :q))"
    order = (
        "created_at DESC, id DESC" if newest_first else f"ts_rank(search_tsv, {q}) DESC, id DESC"
    )
    sql = f"SELECT id FROM messages WHERE search_tsv @@ {q} ORDER BY {order} LIMIT :lim"
    params = {
        "s": tm.scope_tsquery(scope),
        "cfg": config,
        "q": tm.tsquery(terms, all_terms=all_terms, prefix_last=prefix_last),
        "lim": limit,
    }
    return list((await c.execute(text(sql), params)).scalars().all())


#: The recency walk reads ``WALK_SLACK`` times the rows the share predicts, and is not tried when
#: that is more than ``WALK_ROWS`` (a word that rare is cheaper to look up in the index).
WALK_SLACK = 2
WALK_ROWS = 20_000

#: The owner's newest ``:scan`` messages (index ``idx_messages_user_recent``, migration 0019, read
#: backwards), those holding the query kept: the subquery's LIMIT keeps the planner from turning
#: the test into a GIN bitmap of every match.
_WALK_PG = (
    "SELECT id FROM (SELECT id, created_at, search_tsv FROM messages WHERE user_id = :u "
    "ORDER BY created_at DESC, id DESC LIMIT :scan) s "
    "WHERE search_tsv @@ to_tsquery(CAST(:cfg AS regconfig), :q) "
    "ORDER BY created_at DESC, id DESC LIMIT :lim"
)
_OWNED_PG = "SELECT count(*) FROM (SELECT 1 FROM messages WHERE user_id = :u LIMIT :scan) s"


async def _walk_owner(
    c: AsyncConnection, owner: str, q: str, share: float, limit: int, config: str
) -> list[str] | None:
    """The ``owner``'s newest ``limit`` messages matching the tsquery ``q``, by walking the
    owner's messages newest first — or None when the walk's bound ran out before it was sure.

    Why: for a word in a large share of the messages GIN has no shortcut to the newest matches:
    it builds the bitmap of all of them (600,000 for "garden" in a million messages: 5.7 s)
    and sorts. Walking the user's messages newest first and testing each ``search_tsv`` reads
    about ``limit / share`` rows (2,000 for a word in 20 % of them) at any history size. The
    walk stops after ``WALK_SLACK`` times that: if the user's own share is lower than the
    estimate (on a shared server, a word others use more), the index is asked instead. The
    result is the same either way: every message of the owner holds the owner's scope token,
    and both read in (created_at, id) order."""
    scan = math.ceil(WALK_SLACK * limit / share)
    if scan > WALK_ROWS:
        return None
    params = {"u": owner, "scan": scan, "q": q, "cfg": config, "lim": limit}
    found = list((await c.execute(text(_WALK_PG), params)).scalars().all())
    if len(found) >= limit:
        return found
    # fewer than asked: every match is in hand only if the walk reached the owner's oldest
    owned = int((await c.execute(text(_OWNED_PG), {"u": owner, "scan": scan})).scalar_one())
    return found if owned < scan else None


async def _newest_of_owner(
    c: AsyncConnection,
    owner: str,
    terms: Sequence[str],
    all_terms: bool,
    prefix_last: bool,
    limit: int,
    config: str,
) -> list[str] | None:
    """The ``owner``'s newest ``limit`` messages with the words, found from the words alone —
    or None when the words alone do not tell them (the caller then asks the scoped index).

    Why: ANDing the words with the owner's scope token makes the engine read the token's entries
    (SQLite's doclist, PostgreSQL's posting tree) — a million for a user with a million messages,
    the cost that grew 4× from 10k to 1M (bench/search.py). The words' newest ``limit`` matches,
    whoever wrote them, cost what the words cost; each comes with its author (a primary-key
    lookup ``rows`` repeats, warm). They are exactly the owner's newest ``limit`` when every one
    is the owner's, or when there are fewer than ``limit`` (every match is in hand: the owner's
    among them are all the owner has). Otherwise — another user's message among a full page,
    as on a shared server — the owner's newest may lie further back: None. Only the owner's ids
    are returned either way, and ``rows`` checks the owner again."""
    if _is_sqlite(c):
        expr = tm.fts5_match(terms, [], all_terms=all_terms, prefix_last=prefix_last)
        sql = (
            "SELECT f.r, i.message_id, m.user_id FROM (SELECT rowid AS r FROM messages_fts "
            "WHERE messages_fts MATCH :q ORDER BY rowid DESC LIMIT :lim) f "
            "CROSS JOIN messages_fts_ids i ON i.rid = f.r CROSS JOIN messages m ON m.id = i.message_id"
        )
        params: dict = {"q": expr, "lim": limit}
    else:
        sql = (
            "SELECT created_at, id, user_id FROM messages "
            "WHERE search_tsv @@ to_tsquery(CAST(:cfg AS regconfig), :q) "
            "ORDER BY created_at DESC, id DESC LIMIT :lim"
        )
        q = tm.tsquery(terms, all_terms=all_terms, prefix_last=prefix_last)
        params = {"q": q, "cfg": config, "lim": limit}
    found = sorted(((r[0], r[1], r[2]) for r in (await c.execute(text(sql), params))), reverse=True)
    mine = [mid for _, mid, author in found if author == owner]
    return mine if len(mine) == len(found) or len(found) < limit else None


_HIT_COLUMNS = "id, conversation_id, parent_id, role, search_text, created_at, depth, user_id"


async def match_each(
    c: AsyncConnection,
    scope: tm.Scope,
    terms: Sequence[str],
    *,
    per_term: int,
    owner: str,
    config: str = "simple",
    whole: Collection[str] = (),
) -> list[Hit]:
    """The ``owner``'s scope messages containing each term: the ``per_term`` best for every
    term, in one statement, with what ranking needs (as ``rows`` reads it: no second trip to
    the table), duplicates removed, first occurrence kept. The terms in ``whole`` are known to
    be in at most ``per_term`` messages of the scope (counted in this transaction): all of
    their messages are read, unranked.

    Why unranked: the engines rank every match before the first row comes back, and FTS5's
    bm25() also counts the messages of each phrase of the query — the scope token's too, all
    10,000 of a 10,000-message conversation, for every term (0.3 ms each; 0.05 ms at 100
    messages). When every match is wanted anyway, the order is not.

    Why per term: PostgreSQL's ``ts_rank`` ignores how rare a word is, so one ranked OR query
    lets messages with several common words crowd out the only message with the rare one; a
    bound per term gives every term its own candidates, whatever the engine's ranking. On
    PostgreSQL each term's messages are ranked by occurrences over length (normalisation 2), as
    BM25 ranks a single word in FTS5: the short message that is about the word comes first, not
    the long one that mentions it twice. A term ending in ``terms.FORMS`` matches any of its forms.
    """
    _check_scope(scope)
    terms = [x for x in terms if tm.searchable(x)]
    if not terms:
        return []
    params: dict = {"lim": per_term, "cfg": config, "s": tm.scope_tsquery(scope)}
    parts = []
    for i, term in enumerate(terms):
        ranked = term not in whole
        if _is_sqlite(c):
            params[f"q{i}"] = tm.fts5_match([term], scope)
            order = "ORDER BY bm25(messages_fts, 1.0, 1.0, 0.0) " if ranked else ""
            ids = _ids_of(
                f"SELECT rowid AS r FROM messages_fts WHERE messages_fts MATCH :q{i} "
                f"{order}LIMIT :lim"
            )
            cols = ", ".join(f"m.{x.strip()}" for x in _HIT_COLUMNS.split(","))
            parts.append(
                f"SELECT * FROM (SELECT {cols} FROM ({ids}) x CROSS JOIN messages m ON m.id = x.id)"
            )
        else:
            params[f"q{i}"] = tm.tsquery([term])
            q = f"(CAST(:s AS tsquery) && to_tsquery(CAST(:cfg AS regconfig), :q{i}))"
            order = f"ORDER BY ts_rank(search_tsv, {q}, 2) DESC, id DESC " if ranked else ""
            parts.append(
                f"(SELECT {_HIT_COLUMNS} FROM messages WHERE search_tsv @@ {q} {order}LIMIT :lim)"
            )
    found = (await c.execute(text(" UNION ALL ".join(parts)), params)).all()
    mine = {r.id: r for r in found if r.user_id == owner}  # first occurrence keeps its place
    return [_hit(r) for r in mine.values()]


#: A candidate message with its conversation's visibility (``store.searchable``) and title.
_WITH_CONVERSATION = (
    "m.id, m.conversation_id, m.parent_id, m.role, m.search_text, m.created_at, m.depth, "
    "m.user_id AS author, c.id AS conv_id, c.title, c.user_id, c.workspace_id, c.archived, "
    "c.inline_source_conv"
)


def _hit(r) -> Hit:
    """A row whose first columns are ``_HIT_COLUMNS``' (by position: a Row's attribute access
    costs ~3× as much, and recall reads ~150 rows a turn at 10,000 messages)."""
    mid, conversation_id, parent_id, role, search_text, created_at, depth = r[:7]
    return Hit(
        mid, conversation_id, parent_id, role, search_text or "", int(created_at), int(depth)
    )


def _owned_visible(found, owner: str) -> tuple[list[Hit], dict[str, str]]:
    """(the owner's hits, {conversation id: title} of their conversations search may show)."""
    hits = [_hit(r) for r in found if r.author == owner]
    titles = {r.conv_id: r.title for r in found if store.searchable(r, owner)}
    return hits, titles


async def newest_hits(
    c: AsyncConnection,
    owner: str,
    terms: Sequence[str],
    *,
    prefix_last: bool = False,
    limit: int = 200,
    config: str = "simple",
    share: float | None = None,
) -> tuple[list[Hit], dict[str, str]]:
    """Personal search's candidates: the ``owner``'s newest ``limit`` messages holding every
    term (``match``, newest first), read with their conversations — (hits, {conversation id:
    title} of the conversations among them search may show, ``store.searchable``).

    Why one read: the ids, the rows and the conversations' visibility were three statements,
    each a lookup of every candidate — 400 of them at a million messages, where 10k has a
    dozen (bench/search.py). The words-alone page (as ``_newest_of_owner``) is read with its
    rows and conversations in the same statement; the recency walk (``_walk_owner``, when
    ``share`` says the words are in a large share) and the scoped index give ids, whose rows
    and conversations are then one statement."""
    terms = [x for x in terms if x.isalnum()]
    if not terms:
        return [], {}
    if share and not _is_sqlite(c):
        q = tm.tsquery(terms, all_terms=True, prefix_last=prefix_last)
        walked = await _walk_owner(c, owner, q, share, limit, config)
        if walked is not None:
            return await _hits_of(c, owner, walked)
    found = await _words_alone(c, terms, prefix_last, limit, config)
    # as _newest_of_owner: decided when the page is all the owner's or holds every match
    if len(found) < limit or all(r.author == owner for r in found):
        return _owned_visible(found, owner)
    ids = await match(
        c,
        [tm.scope_token(owner)],
        terms,
        all_terms=True,
        prefix_last=prefix_last,
        newest_first=True,
        limit=limit,
        config=config,
    )
    return await _hits_of(c, owner, ids)


async def _words_alone(c: AsyncConnection, terms: Sequence[str], prefix_last, limit, config):
    """The words' newest ``limit`` matches, whoever wrote them, with their conversations."""
    if _is_sqlite(c):
        expr = tm.fts5_match(terms, [], all_terms=True, prefix_last=prefix_last)
        sql = (
            f"SELECT {_WITH_CONVERSATION} FROM (SELECT rowid AS r FROM messages_fts "
            "WHERE messages_fts MATCH :q ORDER BY rowid DESC LIMIT :lim) f "
            "CROSS JOIN messages_fts_ids i ON i.rid = f.r CROSS JOIN messages m ON m.id = i.message_id "
            "CROSS JOIN conversations c ON c.id = m.conversation_id"
        )
        return (await c.execute(text(sql), {"q": expr, "lim": limit})).all()
    sql = (
        f"SELECT {_WITH_CONVERSATION} FROM (SELECT id, conversation_id, parent_id, role, "
        "search_text, created_at, depth, user_id FROM messages "
        "WHERE search_tsv @@ to_tsquery(CAST(:cfg AS regconfig), :q) "
        "ORDER BY created_at DESC, id DESC LIMIT :lim) m "
        "JOIN conversations c ON c.id = m.conversation_id"
    )
    q = tm.tsquery(terms, all_terms=True, prefix_last=prefix_last)
    return (await c.execute(text(sql), {"q": q, "cfg": config, "lim": limit})).all()


async def _hits_of(
    c: AsyncConnection, owner: str, ids: Sequence[str]
) -> tuple[list[Hit], dict[str, str]]:
    """``_owned_visible`` of the messages ``ids`` (by primary key), read with their conversations."""
    if not ids:
        return [], {}
    sql = (
        f"SELECT {_WITH_CONVERSATION} FROM messages m "
        "JOIN conversations c ON c.id = m.conversation_id WHERE m.id IN :ids"
    )
    stmt = text(sql).bindparams(bindparam("ids", expanding=True))
    return _owned_visible((await c.execute(stmt, {"ids": list(ids)})).all(), owner)


#: By primary key only: with ``user_id = ?`` in the statement too, SQLite may walk the user's
#: index (a million rows for a long history) instead of probing the ids; the owner is checked on
#: the fetched rows instead.
_ROWS = select(
    M.id, M.conversation_id, M.parent_id, M.role, M.search_text, M.created_at, M.depth, M.user_id
).where(M.id.in_(bindparam("ids", expanding=True)))


async def rows(
    c: AsyncConnection, user_id: str, ids: Sequence[str], *, conversations=None
) -> list[Hit]:
    """The caller's messages among ``ids`` (anything else is silently left out); with
    ``conversations`` (a workspace's, which members share) those of these conversations."""
    if not ids:
        return []
    found = [
        r
        for r in (await c.execute(_ROWS, {"ids": list(ids)})).all()
        if (r.user_id == user_id if conversations is None else r.conversation_id in conversations)
    ]
    return [_hit(r) for r in found]

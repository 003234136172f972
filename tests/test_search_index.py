"""The message full-text index on SQLite and PostgreSQL: kept in step with every write (append,
edit, streaming → complete, delete round, delete conversation, fork), backfilled by its
migration, CJK terms identical in Python and SQL, scoped queries that never cross users."""

from __future__ import annotations

import asyncio
import math
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

from chatmem.conversations import forks
from chatmem.db import schema as t
from chatmem.db.engine import Database
from chatmem.db.fulltext import cjk_terms
from chatmem.db.migrate import downgrade, upgrade
from chatmem.search import index, rank
from chatmem.search import store as search_store
from chatmem.search import terms as tm

from .social_support import db_of, insert_chain, set_columns
from .tree_api import new_conv, say

M = t.messages.c


async def indexed_ids(db: Database) -> set[str]:
    async with db.read() as c:
        if db.sqlite:
            sql = "SELECT message_id FROM messages_fts_ids"
        else:
            sql = "SELECT id FROM messages WHERE search_tsv IS NOT NULL"
        return set((await c.execute(text(sql))).scalars().all())


async def expected_ids(db: Database) -> set[str]:
    async with db.read() as c:
        q = select(M.id).where(M.search_text != "", M.status != "streaming")
        return set((await c.execute(q)).scalars().all())


async def find(db: Database, user_id: str, scope_ids: list[str], words: str, **kw) -> set[str]:
    scope = [tm.scope_token(x) for x in scope_ids]
    async with db.read() as c:
        ids = await index.match(c, scope, tm.query_terms(words), **kw)
        return {h.id for h in await index.rows(c, user_id, ids)}


async def test_index_follows_every_write(app, new_user):
    u = await new_user()
    db = db_of(app)
    cid = (await new_conv(u.client, title="t"))["id"]
    q = await say(u.client, cid, "I adopted a tabby cat named Miso")
    a = await say(u.client, cid, "Miso is a lovely name", role="assistant")
    assert await indexed_ids(db) == {q["id"], a["id"]} == await expected_ids(db)
    assert await find(db, u.id, [cid], "miso") == {q["id"], a["id"]}

    # an edit replaces the indexed text
    r = await u.client.patch(
        f"/api/conversations/{cid}/messages/{a['id']}", json={"content": "What a name"}
    )
    assert r.status_code == 200, r.text
    assert await find(db, u.id, [cid], "miso") == {q["id"]}
    assert await find(db, u.id, [cid], "name") == {a["id"]}

    # a streaming row is not indexed until it ends, then it is
    [s] = await insert_chain(
        app, cid, [{"role": "assistant", "text": "tabby", "status": "streaming"}]
    )
    assert s not in await indexed_ids(db)
    await set_columns(app, t.messages, s, status="complete", search_text="tabby stripes")
    assert await find(db, u.id, [cid], "stripes") == {s}

    # forks copy rows: the copies are indexed in their own conversation
    r = await u.client.post(f"/api/conversations/{cid}/fork", json={})
    assert r.status_code == 201, r.text
    fork_id = r.json()["id"]
    await forks.copies_done()  # the copy runs after the fork answers (conversations/forks.py)
    assert len(await find(db, u.id, [fork_id], "tabby")) == 2
    assert await indexed_ids(db) == await expected_ids(db)

    # deleting a round (the question and every answer variant: a regenerated branch too) and a
    # whole conversation removes their entries
    [variant] = await insert_chain(
        app, cid, [{"role": "assistant", "text": "a tabby variant"}], parent=q["id"]
    )
    assert await find(db, u.id, [cid], "variant") == {variant}
    r = await u.client.delete(f"/api/conversations/{cid}/messages/{q['id']}")
    assert r.status_code == 200, r.text
    assert await find(db, u.id, [cid], "tabby") == {s}
    assert await find(db, u.id, [cid], "variant") == set()
    assert await indexed_ids(db) == await expected_ids(db)
    assert (await u.client.delete(f"/api/conversations/{cid}")).status_code == 204
    assert await find(db, u.id, [cid], "tabby") == set()
    assert await indexed_ids(db) == await expected_ids(db)


async def _vectors(db: Database, conv_id: str) -> dict[str, tuple[str, str | None]]:
    """PostgreSQL: each message's (text, stored ``search_tsv``) and what ``chatmem_search_tsv``
    computes for it now, by id."""
    sql = (
        "SELECT id, search_tsv::text AS stored, chatmem_search_tsv(search_text, status, user_id, "
        "conversation_id, agent_id)::text AS computed FROM messages WHERE conversation_id = :c"
    )
    async with db.read() as c:
        rows = (await c.execute(text(sql), {"c": conv_id})).all()
    return {r.id: (r.stored, r.computed) for r in rows}


async def test_fork_copies_are_indexed_as_if_written(app, new_user):
    """A fork's copies are found by search in the fork (and the source's still in the source).
    On PostgreSQL the fork copies each source vector instead of parsing the text again
    (migration 0021): every copy's vector is exactly the one its own row computes — positions
    and all, when the text holds a word equal to a scope token (the source conversation's,
    ``noagent``) — and the trigger keeps the column derived on later updates."""
    u = await new_user()
    db = db_of(app)
    cid = (await new_conv(u.client))["id"]
    token = tm.scope_token(cid)
    texts = [
        "the heron waits by the river",
        f"noagent said {token} twice: {token}",
        "我住在北京大学附近",
        "",  # no visible text: not indexed
    ]
    for i, words in enumerate(texts):
        await insert_chain(app, cid, [{"role": ("user", "assistant")[i % 2], "text": words}])
    r = await u.client.post(f"/api/conversations/{cid}/fork", json={})
    assert r.status_code == 201, r.text
    fork = r.json()["id"]
    await forks.copies_done()  # the copy runs after the fork answers (conversations/forks.py)
    for words in ("heron", "北京", "twice"):
        assert len(await find(db, u.id, [fork], words)) == 1, words
    for words in ("heron", "北京"):  # ("twice" is in [cid] twice: its copy's text holds the token)
        assert len(await find(db, u.id, [cid], words)) == 1, words
    assert await find(db, u.id, [fork], "heron") != await find(db, u.id, [cid], "heron")
    assert await indexed_ids(db) == await expected_ids(db)
    if db.sqlite:
        return
    copies = await _vectors(db, fork)
    assert len(copies) == 4 and sum(v[0] is None for v in copies.values()) == 1
    assert all(stored == computed for stored, computed in copies.values()), copies
    [mixed] = [v[0] for v in copies.values() if v[0] and "'twice'" in v[0]]
    assert f"'{token}':3,5" in mixed and "'noagent':1" in mixed, mixed  # text positions kept
    assert tm.scope_token(fork) in mixed
    # an update of another column keeps the vector; one of the vector alone is recomputed
    some = next(k for k, v in copies.items() if v[0])
    await set_columns(app, t.messages, some, feedback="like")
    assert (await _vectors(db, fork))[some] == copies[some]
    async with db.write() as c:
        await c.execute(text("UPDATE messages SET search_tsv = NULL WHERE id = :i"), {"i": some})
    assert (await _vectors(db, fork))[some] == copies[some]


async def test_scopes_never_cross_users(app, new_user):
    u, v = await new_user(), await new_user()
    db = db_of(app)
    cu = (await new_conv(u.client))["id"]
    cv = (await new_conv(v.client))["id"]
    mu = await say(u.client, cu, "the secret password is zebra")
    mv = await say(v.client, cv, "my zebra is striped")
    assert await find(db, u.id, [u.id], "zebra") == {mu["id"]}
    assert await find(db, v.id, [v.id], "zebra") == {mv["id"]}
    # even when asked for another user's scope, rows() only returns the caller's messages
    assert await find(db, u.id, [v.id], "zebra") == set()
    assert await find(db, u.id, [cv], "zebra") == set()
    with pytest.raises(ValueError):
        await find(db, u.id, ["bad-id!"], "zebra")


async def test_cjk_and_prefix_matching(app, new_user):
    u = await new_user()
    db = db_of(app)
    cid = (await new_conv(u.client))["id"]
    a = await say(u.client, cid, "我住在北京大学附近，每天骑车")
    b = await say(u.client, cid, "東京の天気はどうですか")
    c = await say(u.client, cid, "planning a trip to Portugal")
    assert await find(db, u.id, [cid], "北京") == {a["id"]}
    assert await find(db, u.id, [cid], "大学 骑车", all_terms=True) == {a["id"]}
    assert await find(db, u.id, [cid], "東京") == {b["id"]}
    assert await find(db, u.id, [cid], "portu", prefix_last=True) == {c["id"]}
    assert await find(db, u.id, [cid], "portu") == set()
    r = await u.client.get("/api/search", params={"q": "北京"})
    assert [m["id"] for m in r.json()["messages"]] == [a["id"]]
    snip = r.json()["messages"][0]["snippet"]
    assert snip["text"][snip["match_start"] : snip["match_end"]] == "北京"


async def test_frequencies(app, new_user):
    u = await new_user()
    db = db_of(app)
    cid = (await new_conv(u.client))["id"]
    for s in ("red apple", "green apple", "red car", "blue sky"):
        await say(u.client, cid, s)
    async with db.read() as c:
        n, df = await index.frequencies(c, [tm.scope_token(cid)], ["red", "apple", "sky", "zzz"])
    assert n == 4 and df == {"red": 2, "apple": 2, "sky": 1, "zzz": 0}


async def test_match_each_reads_a_term_that_fits_whole_and_ranks_the_others(app, new_user):
    """``match_each``: a term in at most ``per_term`` messages (``whole``) comes back with every
    message, unranked — the same messages the ranked query gives; a term in more keeps the
    engine's ranking (the short message that is about the word first)."""
    u = await new_user()
    db = db_of(app)
    cid = (await new_conv(u.client))["id"]
    mine = [await say(u.client, cid, f"red apple number {i}") for i in range(3)]
    for i in range(6):
        await say(u.client, cid, f"a long line about plenty of other things and red, {i}")
    short = await say(u.client, cid, "red red")
    scope = [tm.scope_token(cid)]

    async def ask(term: str, per_term: int, whole=()) -> list[str]:
        async with db.read() as c:
            found = await index.match_each(
                c, scope, [term], per_term=per_term, owner=u.id, whole=whole
            )
        return [h.id for h in found]

    ranked, unranked = await ask("apple", 3), await ask("apple", 3, whole={"apple"})
    assert set(ranked) == set(unranked) == {m["id"] for m in mine}
    assert (await ask("red", 2))[0] == short["id"]
    assert len(await ask("red", 2, whole={"apple"})) == 2


async def test_migration_backfills_existing_messages(db_url, tmp_path):
    """A database with messages written before 0008 is indexed by the upgrade."""
    if db_url.startswith("sqlite"):
        url = f"sqlite:///{tmp_path / 'old.db'}"
        shutil.copy(db_url.removeprefix("sqlite:///"), tmp_path / "old.db")
    else:
        url = db_url
    await asyncio.to_thread(downgrade, url, "0007")
    db = Database(url)
    try:
        async with db.write() as c:
            await c.execute(
                text(
                    "INSERT INTO users (id, email, created_at, updated_at) "
                    "VALUES ('usr_old', 'old@x', 0, 0)"
                )
            )
            await c.execute(
                text(
                    "INSERT INTO conversations (id, user_id, created_at, updated_at) "
                    "VALUES ('c_old', 'usr_old', 0, 0)"
                )
            )
            await c.execute(
                text(
                    "INSERT INTO messages (id, conversation_id, role, search_text, created_at, "
                    "user_id) VALUES ('msg_old', 'c_old', 'user', '我喜欢 sourdough', 0, 'usr_old')"
                )
            )
    finally:
        await db.dispose()
    await asyncio.to_thread(upgrade, url)
    db = Database(url)
    try:
        assert await find(db, "usr_old", ["usr_old"], "sourdough") == {"msg_old"}
        assert await find(db, "usr_old", ["c_old"], "喜欢") == {"msg_old"}
        async with db.write() as c:
            await c.execute(text("DELETE FROM messages WHERE id = 'msg_old'"))
            await c.execute(text("DELETE FROM conversations WHERE id = 'c_old'"))
            await c.execute(text("DELETE FROM users WHERE id = 'usr_old'"))
        assert await indexed_ids(db) == set()
    finally:
        await db.dispose()


_CJKISH = st.text(
    alphabet=st.sampled_from(
        [*"我住在北京東京の天気はどうですか々abc 1,。！\n", "\u4e00", "\u9fff"]
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(samples=st.lists(_CJKISH, min_size=1, max_size=8))
def test_sql_cjk_terms_equal_python(pg_url, samples):
    """PostgreSQL's chatmem_cjk_terms is the Python function, character for character."""
    if pg_url is None:
        pytest.skip("CHATMEM_TEST_POSTGRES_URL not set")

    async def run() -> list[str]:
        db = Database(pg_url)
        try:
            async with db.read() as c:
                sql = text("SELECT chatmem_cjk_terms(:s)")
                return [(await c.execute(sql, {"s": s})).scalar() for s in samples]
        finally:
            await db.dispose()

    assert asyncio.run(run()) == [cjk_terms(s) for s in samples]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_doc_terms_are_the_index_words_and_cjk_terms(s):
    """``terms.doc_terms`` (ASCII text takes a faster path) is exactly the index's tokenisation:
    its words, then its CJK characters and pairs."""
    assert tm.doc_terms(s) == (*tm.words(s), *cjk_terms(s).split())


_WORDS = ["plan", "plans", "planned", "planning", "omar", "north", "no", "北京", "x1"]


def _reference_bm25(docs, query, df, n_docs, prefix_last, weights):
    """BM25 counted the plain way: each query term's forms scanned in the text's token list."""
    toks = {i: tm.doc_terms(txt) for i, txt in docs.items()}
    avgdl = max(sum(map(len, toks.values())) / len(toks), 1.0) if toks else 1.0
    out = {}
    for i, ts in toks.items():
        norm = rank.K1 * (1 - rank.B + rank.B * len(ts) / avgdl)
        s = 0.0
        for j, q in enumerate(dict.fromkeys(query)):
            f = sum(ts.count(w) for w in tm.forms(q))
            if prefix_last and j == len(query) - 1:
                f += sum(1 for w in ts if w != q and w.startswith(q))
            if f:
                w = rank.idf(df.get(q, 0), n_docs) * weights.get(q, 1.0)
                s += w * f * (rank.K1 + 1) / (f + norm)
        if s > 0:
            out[i] = s
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join), max_size=8),
    st.lists(
        st.sampled_from(["plan~", "plan", "omar", "no", "北京", "nor"]), min_size=1, unique=True
    ),
    st.booleans(),
)
def test_bm25_counts_every_form_as_a_scan_of_the_tokens_would(texts, query, prefix_last):
    """``rank.bm25`` reads term frequencies from each text's ``Bag`` (one set intersection with
    the query's words): the same scores as scanning the token list for each term and form."""
    docs = {f"m{i:02d}": txt for i, txt in enumerate(texts)}
    weights = {q: 1.0 + k / 4 for k, q in enumerate(query)}
    df = {q: k + 1 for k, q in enumerate(query)}
    got = rank.bm25(docs, query, df, 20, prefix_last=prefix_last, weights=weights)
    want = _reference_bm25(docs, query, df, 20, prefix_last, weights)
    assert {x.id for x in got} == set(want)
    assert all(math.isclose(x.score, want[x.id], rel_tol=1e-12) for x in got)
    assert [x.score for x in got] == sorted((x.score for x in got), reverse=True)


async def test_the_words_alone_decide_only_a_page_of_the_owners_own(app, new_user):
    """``match(owner=…)`` first asks the index for the words alone (whoever wrote them): that
    page answers only when it is all the owner's or holds every match; another user's message
    in a full page sends the query to the scoped index. Never another user's id either way."""
    u, v = await new_user(), await new_user()
    db = db_of(app)
    cu = (await new_conv(u.client))["id"]
    cv = (await new_conv(v.client))["id"]
    mine = [(await say(u.client, cu, f"kiwi number {i}"))["id"] for i in range(3)]
    theirs = [(await say(v.client, cv, f"kiwi of v {i}"))["id"] for i in range(2)]
    terms = ["kiwi"]

    async def newest(user, limit: int) -> list[str]:
        async with db.read() as c:
            scope = [tm.scope_token(user.id)]
            return await index.match(
                c, scope, terms, all_terms=True, newest_first=True, limit=limit, owner=user.id
            )

    async def words_alone(owner: str, limit: int) -> list[str] | None:
        async with db.read() as c:
            return await index._newest_of_owner(c, owner, terms, True, False, limit, "simple")

    assert await words_alone(v.id, 2) == theirs[::-1]  # a full page, all v's: decided
    assert await words_alone(u.id, 2) is None  # v's messages are the newest: not decided
    assert await words_alone(u.id, 10) == mine[::-1]  # every match in hand: u's are all u has
    assert await newest(u, 2) == mine[::-1][:2]  # from the scoped index
    assert await newest(u, 10) == mine[::-1]
    assert await newest(v, 2) == theirs[::-1]
    r = await u.client.get("/api/search", params={"q": "kiwi"})
    assert sorted(m["id"] for m in r.json()["messages"]) == sorted(mine)


async def test_the_recency_walk_finds_what_the_index_finds(app, new_user):
    """PostgreSQL's recency walk (``_walk_owner``: a word ANALYZE shows in a large share of the
    messages) returns exactly the owner's newest matches the index returns — when its page fills,
    when it reaches the owner's oldest message — and gives up (None) when its bound runs out
    before it is sure. ``match`` answers the same with or without it, on both databases (SQLite
    never walks: its index reads the newest matches first)."""
    u, v = await new_user(), await new_user()
    db = db_of(app)
    cu = (await new_conv(u.client))["id"]
    cv = (await new_conv(v.client))["id"]
    texts = [
        f"{'plum ' if i % 2 == 0 else ''}day {i}{' fig' if i % 20 == 0 else ''}" for i in range(60)
    ]
    await insert_chain(app, cu, [{"role": "user", "text": x} for x in texts])
    await insert_chain(app, cv, [{"role": "user", "text": f"plum of v {i}"} for i in range(20)])
    scope = [tm.scope_token(u.id)]

    async def newest(terms: list[str], limit: int, **kw) -> list[str]:
        async with db.read() as c:
            return await index.match(
                c, scope, terms, all_terms=True, newest_first=True, limit=limit, owner=u.id, **kw
            )

    for terms, prefix in ((["plum"], False), (["pl"], True), (["plum", "fig"], False)):
        for limit in (10, 40):
            found = await newest(terms, limit, prefix_last=prefix)
            assert found == await newest(terms, limit, prefix_last=prefix, share=0.5)
            assert len(found) == min(limit, 3 if "fig" in terms else 30)
    if db.sqlite:
        return

    async def walk(q: str, share: float, limit: int) -> list[str] | None:
        async with db.read() as c:
            return await index._walk_owner(c, u.id, q, share, limit, "simple")

    plums = await newest(["plum"], 40)
    assert await walk("'plum'", 0.5, 10) == plums[:10]  # 40 rows read, the page filled
    assert await walk("'pl':*", 0.5, 10) == plums[:10]
    assert await walk("'plum'", 0.5, 40) == plums  # 160 allowed: every one of u's 60 read
    assert await walk("'fig'", 0.5, 10) is None  # 40 of u's 60 read, 2 found: not sure
    assert await walk("'fig'", 0.1, 10) == await newest(["fig"], 10)  # 200 allowed: all read
    assert await walk("'plum'", 1e-4, 10) is None  # a bound over WALK_ROWS: not tried


async def test_statistics_tell_common_words_and_search_answers_the_same(app, new_user, monkeypatch):
    """``index.common`` reads ANALYZE's shares of the most common lexemes on PostgreSQL (nothing
    on SQLite, nor before ANALYZE). A search using them — document frequencies not counted, the
    last word not asked as a prefix, the newest matches found by the recency walk — answers
    exactly what it answers without them."""
    u, v = await new_user(), await new_user()
    db = db_of(app)
    cu = (await new_conv(u.client, title="orchard notes"))["id"]
    cv = (await new_conv(v.client))["id"]
    texts = [
        f"{'plum tart' if i % 2 == 0 else 'plumber visit'} {'quince ' * (i % 3)}day {i}"
        for i in range(300)
    ]
    await insert_chain(app, cu, [{"role": "user", "text": x} for x in texts])
    await insert_chain(app, cv, [{"role": "user", "text": f"plum of v {i}"} for i in range(100)])
    queries = ["plum", "plum quince", "quince plu", "plumber", "tart day"]

    async def answers() -> list[dict]:
        out = []
        for q in queries:
            r = await u.client.get("/api/search", params={"q": q})
            assert r.status_code == 200, r.text
            out.append(r.json())
        return out

    monkeypatch.setattr(index, "DF_CAP", 20)  # "plum" (in 250 of 400) is then everywhere
    monkeypatch.setattr(index, "SCOPE_CAP", 400)
    before = await answers()
    async with db.read() as c:
        assert await index.common(c, ["plum"]) == index.Common()  # no statistics yet
    if not db.sqlite:
        async with db.engine.connect() as c:
            await c.exec_driver_sql("ANALYZE messages")
            await c.commit()
    async with db.read() as c:
        known = await index.common(c, ["plum", "quince", "nowhere"])
    if db.sqlite:
        assert known == index.Common()
    else:
        assert known.rows == 400
        assert abs(known.share["plum"] - 0.625) < 0.01  # 150 of u's, 100 of v's
        assert known.everywhere("plum")
        assert known.share_of_all(["plum", "nowhere"]) is None
    assert await answers() == before
    assert [m["snippet"] for m in before[0]["messages"]][:1]  # the queries do find messages


async def test_newest_hits_read_at_once_what_the_three_reads_read(app, new_user):
    """``newest_hits`` (personal search's candidates with their conversations, one statement)
    returns what ``match`` + ``rows`` + ``visible_titles`` returned: the owner's newest matches
    (when the words-alone page is decided and when another user's message sends it to the
    scoped index), titles only of the conversations search may show (not archived ones)."""
    u, v = await new_user(), await new_user()
    db = db_of(app)
    cu = (await new_conv(u.client, title="kept"))["id"]
    ca = (await new_conv(u.client, title="archived"))["id"]
    cv = (await new_conv(v.client))["id"]
    await insert_chain(app, cu, [{"role": "user", "text": f"kiwi {i}"} for i in range(4)])
    await insert_chain(app, ca, [{"role": "user", "text": f"kiwi old {i}"} for i in range(2)])
    await set_columns(app, t.conversations, ca, archived=1)
    await insert_chain(app, cv, [{"role": "user", "text": f"kiwi of v {i}"} for i in range(2)])
    scope = [tm.scope_token(u.id)]
    for terms, prefix in ((["kiwi"], False), (["ki"], True), (["kiwi", "old"], False)):
        for limit in (2, 5, 20):
            async with db.read() as c:
                hits, titles = await index.newest_hits(
                    c, u.id, terms, prefix_last=prefix, limit=limit
                )
                ids = await index.match(
                    c,
                    scope,
                    terms,
                    all_terms=True,
                    prefix_last=prefix,
                    newest_first=True,
                    limit=limit,
                    owner=u.id,
                )
                old = await index.rows(c, u.id, ids)
                shown = await search_store.visible_titles(c, u.id, (h.conversation_id for h in old))
            assert sorted(hits, key=lambda h: h.id) == sorted(old, key=lambda h: h.id)
            assert len(hits) == min(limit, 2 if "old" in terms else 6)
            assert titles == shown
            assert ca not in titles
            assert (cu in titles) == (limit >= 5 and "old" not in terms)


def test_postgres_text_search_configuration_is_chosen_per_deployment(pg_english_url):
    """``CHATMEM_SEARCH_CONFIG=english`` at migration time (and in the settings): the index stems
    English, search finds "runs" in "running", and recall still works — stop words the
    configuration drops ("which", "am", "i") neither fail a turn nor match everything."""

    from chatmem.auth.models import Principal
    from chatmem.context import service as ctx

    from .conftest import make_settings
    from .ctx_helpers import append_chain, conv_row, demo_model, make_conv
    from .embed_support import running_app

    url = pg_english_url

    async def run() -> None:
        settings = make_settings(url, run_worker=False)
        assert settings.search_config == "english"  # the same variable as the migration
        async with running_app(settings, "english@example.com") as (rt, api):
            u = Principal(id=api.id, email=api.email)
            cid = await make_conv(rt.db, u.id)
            [fact, _] = await append_chain(
                rt.db,
                u.id,
                cid,
                [("user", "I was running along the rivers"), ("assistant", "Lovely.")],
            )
            filler = [
                (r, f"Small talk {i} about the weather.")
                for i in range(120)
                for r in ("user", "assistant")
            ]
            await append_chain(rt.db, u.id, cid, filler)
            async with rt.db.read() as c:
                tsv = (
                    await c.execute(
                        text("SELECT search_tsv::text FROM messages WHERE id = :i"), {"i": fact}
                    )
                ).scalar()
            assert "'run'" in tsv and "'river'" in tsv and "'the'" not in tsv
            r = await api.client.get("/api/search", params={"q": "runs river"})
            assert r.status_code == 200, r.text
            assert [m["id"] for m in r.json()["messages"]] == [fact]
            # words the configuration drops match nothing (not every message in scope)
            r = await api.client.get("/api/search", params={"q": "which am"})
            assert r.status_code == 200 and r.json()["messages"] == [], r.text
            for question in ("Where did I go running?", "Which am I?"):
                [q] = await append_chain(rt.db, u.id, cid, [("user", question)])
                async with rt.db.read() as c:
                    tc = await ctx.build_turn_context(
                        c,
                        settings=rt.settings,
                        conv=await conv_row(rt.db, u.id, cid),
                        parent_id=q,
                        model=demo_model(1024, 128),
                        principal=u,
                        rt=rt,
                    )
                rep = tc.report
                assert "error" not in rep["recall"], rep["recall"]
                if question.startswith("Where"):
                    assert fact in rep["recall_message_ids"], rep["recall"]

    asyncio.run(run())


def test_0021_keeps_the_vectors_and_configuration_both_ways(pg_english_url):
    """Migration 0021 (``search_tsv`` by trigger) and its downgrade (the generated column of 0008
    again): the deployment's configuration (``english`` here) and every stored vector survive
    both ways, and the start-up check reads the configuration from either form."""
    from chatmem.search import config_store

    url = pg_english_url
    is_generated = (
        "SELECT attgenerated = 's' FROM pg_attribute "
        "WHERE attrelid = 'messages'::regclass AND attname = 'search_tsv'"
    )

    async def state() -> tuple[bool, str | None, dict]:
        db = Database(url)
        try:
            async with db.read() as c:
                generated = (await c.execute(text(is_generated))).scalar()
                cfg = await config_store.indexed_config(c)
                q = text("SELECT id, search_tsv::text FROM messages")
                return generated, cfg, dict((await c.execute(q)).all())
        finally:
            await db.dispose()

    async def write() -> None:
        db = Database(url)
        try:
            async with db.write() as c:
                for sql in (
                    "INSERT INTO users (id, email, created_at, updated_at) "
                    "VALUES ('usr_m', 'm@x', 0, 0)",
                    "INSERT INTO conversations (id, user_id, created_at, updated_at) "
                    "VALUES ('c_m', 'usr_m', 0, 0)",
                    "INSERT INTO messages (id, conversation_id, role, search_text, created_at, "
                    "user_id) VALUES ('msg_m', 'c_m', 'user', 'running rivers 北京', 0, 'usr_m')",
                ):
                    await c.execute(text(sql))
        finally:
            await db.dispose()

    asyncio.run(write())
    generated, cfg, at_head = asyncio.run(state())
    assert (generated, cfg) == (False, "english")
    assert "'run':1" in at_head["msg_m"] and "'北京'" in at_head["msg_m"], at_head
    downgrade(url, "0020")
    assert asyncio.run(state()) == (True, "english", at_head)
    upgrade(url)
    assert asyncio.run(state()) == (False, "english", at_head)

"""Search on SQLite and PostgreSQL: titles and message text, limits, snippets, LIKE escaping,
exclusions (archived, inline threads, workspace rows, other users) and bad queries."""

from __future__ import annotations

import pytest

from chatmem.db import schema as t
from chatmem.search import index, rank
from chatmem.search import terms as tm
from chatmem.search import text as st

from .social_support import assert_error, insert_chain, new_conv, set_columns


async def _search(user, q: str) -> dict:
    r = await user.client.get("/api/search", params={"q": q})
    assert r.status_code == 200, r.text
    return r.json()


async def test_titles_and_messages_with_snippets(app, new_user):
    u = await new_user()
    cid = await new_conv(u, "Lisbon TRIP ideas")
    long = "x" * 100 + " we should visit the Trip planner tomorrow " + "y" * 100
    q, a = await insert_chain(
        app,
        cid,
        [{"role": "user", "text": "plan my trip please"}, {"role": "assistant", "text": long}],
    )
    await insert_chain(
        app,
        cid,
        [
            {
                "role": "assistant",
                "blocks": [
                    {"kind": "thinking", "text": "secret trip thoughts"},
                    {"kind": "tool_output", "output": "trip tool"},
                    {"kind": "text", "text": "nothing"},
                ],
            }
        ],
    )
    other = await new_conv(u, "Groceries")
    body = await _search(u, "  TRIP ")
    assert body["query"] == "TRIP"
    assert [c["id"] for c in body["conversations"]] == [cid]
    assert body["conversations"][0]["title"] == "Lisbon TRIP ideas"
    hits = body["messages"]
    # ranked by BM25 (the short message that is about the trip first); thinking/tool text is not
    # searched
    assert [h["id"] for h in hits] == [q, a]
    assert all(
        h["conversation_id"] == cid and h["conversation_title"] == "Lisbon TRIP ideas" for h in hits
    )
    snip = hits[1]["snippet"]
    assert snip["text"].startswith("…") and snip["text"].endswith("…")
    assert snip["text"][snip["match_start"] : snip["match_end"]] == "Trip"
    assert len(snip["text"]) <= 2 * 60 + 4 + 2
    assert hits[0]["snippet"] == {"text": "plan my trip please", "match_start": 8, "match_end": 12}
    assert (await _search(u, "grocer"))["conversations"][0]["id"] == other


async def test_limits_and_order(app, new_user):
    u = await new_user()
    convs = []
    for i in range(10):
        cid = await new_conv(u, f"Alpha {i}")
        await set_columns(app, t.conversations, cid, updated_at=1000 + i)
        convs.append(cid)
    ids = await insert_chain(
        app,
        convs[0],
        [{"role": "user", "text": f"needle {i}", "created_at": 5000 + i} for i in range(45)],
    )
    body = await _search(u, "alpha")
    assert [c["id"] for c in body["conversations"]] == convs[::-1][:8]
    body = await _search(u, "needle")
    assert [h["id"] for h in body["messages"]] == ids[::-1][:40]


async def test_like_wildcards_are_literal(app, new_user):
    u = await new_user()
    cid = await new_conv(u)
    pct, plain, under, other, slash = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "save 50% today"},
            {"role": "user", "text": "save 500 today"},
            {"role": "user", "text": "call a_b now"},
            {"role": "user", "text": "call axb now"},
            {"role": "user", "text": r"path C:\temp\x"},
        ],
    )
    assert [h["id"] for h in (await _search(u, "50%"))["messages"]] == [pct]
    assert [h["id"] for h in (await _search(u, "a_b"))["messages"]] == [under]
    assert [h["id"] for h in (await _search(u, r"C:\temp"))["messages"]] == [slash]
    assert (await _search(u, "%%"))["messages"] == []
    assert (await _search(u, "__"))["messages"] == []
    assert {h["id"] for h in (await _search(u, "save"))["messages"]} == {pct, plain}
    assert other not in {h["id"] for h in (await _search(u, "a_b"))["messages"]}


async def test_query_syntax_of_either_engine_is_plain_words(app, new_user):
    """FTS5 and tsquery operators, column filters, quotes and prefixes in ``q`` are words, never
    syntax: no error, and no way out of the caller's scope (another user's scope token named as
    a column filter finds nothing of theirs)."""
    u, v = await new_user(), await new_user()
    cid = await new_conv(u, "plain")
    zebra, near = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "the zebra grazes near the river"},
            {"role": "user", "text": "NEAR and OR and NOT are words too"},
        ],
    )
    await insert_chain(app, await new_conv(v), [{"role": "user", "text": "zebra of v"}])
    v_token = v.id.replace("_", "").lower()
    for q in (
        '"zebra',
        "zebra*",
        "zebra:*",
        "'zebra'",
        "(zebra",
        "^zebra",
        "-zebra",
        "zebra & !river",
        "zebra <-> river",
        "NEAR(zebra river)",
        "grazes NEAR zebra",
    ):  # every word is in the zebra message: found as words
        assert [h["id"] for h in (await _search(u, q))["messages"]] == [zebra], q
    for q in ("{body} zebra", "body:zebra", f"zebra OR scope:{v_token}", f"scope : {v_token}"):
        assert (await _search(u, q))["messages"] == [], q  # "body", "scope": words too
    assert [h["id"] for h in (await _search(u, "NOT OR"))["messages"]] == [near]


async def test_exclusions_and_isolation(app, new_user):
    u, v = await new_user(), await new_user()
    visible = await new_conv(u, "zebra visible")
    archived = await new_conv(u, "zebra archived")
    inline = await new_conv(u, "zebra inline")
    workspace = await new_conv(u, "zebra workspace")
    theirs = await new_conv(v, "zebra theirs")
    for cid in (visible, archived, inline, workspace):
        await insert_chain(app, cid, [{"role": "user", "text": f"zebra in {cid}"}])
    await insert_chain(app, theirs, [{"role": "user", "text": "zebra of v"}])
    await set_columns(app, t.conversations, archived, archived=1)
    await set_columns(app, t.conversations, inline, inline_source_conv=visible)
    await set_columns(app, t.conversations, workspace, workspace_id="ws_1")
    body = await _search(u, "zebra")
    assert [c["id"] for c in body["conversations"]] == [visible]
    assert [h["conversation_id"] for h in body["messages"]] == [visible]
    body = await _search(v, "zebra")
    assert [c["id"] for c in body["conversations"]] == [theirs]
    assert [h["conversation_id"] for h in body["messages"]] == [theirs]
    assert "zebra in" not in str(body)


async def test_bad_queries(app, new_user, anon):
    u = await new_user()
    # the schema says it (minLength 2, a pattern for the surrounding spaces): a 422 before the
    # service, which still refuses what slips through (400 query_too_short)
    for q in ("", " ", "a", "  b  ", "\t c\n"):
        assert_error(await u.client.get("/api/search", params={"q": q}), 422, "validation_error")
    assert_error(await u.client.get("/api/search"), 422, "validation_error")
    assert (await u.client.get("/api/search", params={"q": " ab "})).status_code == 200
    assert_error(await u.client.get("/api/search", params={"q": "x" * 201}), 422)
    assert_error(await anon.get("/api/search", params={"q": "hello"}), 401)
    assert (await _search(u, "ab")) == {"query": "ab", "conversations": [], "messages": []}


@pytest.mark.parametrize(
    ("q", "pattern"),
    [
        ("abc", "%abc%"),
        ("50%", "%50\\%%"),
        ("a_b", "%a\\_b%"),
        ("c:\\d", "%c:\\\\d%"),
    ],
)
def test_like_pattern(q, pattern):
    assert st.like_pattern(q) == pattern


def test_snippet_edges():
    assert st.snippet("Hello World", "world", radius=3) == {
        "text": "…lo World",
        "match_start": 4,
        "match_end": 9,
    }
    assert st.snippet("a\n\n b  NEEDLE c", "needle") == {
        "text": "a b NEEDLE c",
        "match_start": 4,
        "match_end": 10,
    }
    assert st.snippet("no hit here", "zz", radius=2) == {
        "text": "no h…",
        "match_start": -1,
        "match_end": -1,
    }
    assert st.clean_query(" ab ") == "ab" and st.clean_query(" a ") is None


async def test_one_word_skips_the_frequency_count_two_words_use_it(app, new_user, monkeypatch):
    """One word's idf is the same factor for every candidate, so search does not count document
    frequencies for it (the count is what grows most at 1M messages); two words are weighed
    against each other, so they are counted. Same results either way."""
    u = await new_user()
    cid = await new_conv(u, "Notes")
    ids = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "harbour harbour ferry"},
            {"role": "user", "text": "a long line that mentions the harbour once among many words"},
            {"role": "user", "text": "ferry ferry"},
        ],
    )
    calls: list[list[str]] = []
    real = index.frequencies

    async def spy(c, scope, terms, **kw):
        calls.append(list(terms))
        return await real(c, scope, terms, **kw)

    monkeypatch.setattr(index, "frequencies", spy)
    one = await _search(u, "harbour")
    assert calls == []
    assert [h["id"] for h in one["messages"]] == [ids[0], ids[1]]
    two = await _search(u, "harbour ferry")
    assert calls == [["harbour", "ferry"]]
    assert [h["id"] for h in two["messages"]] == [ids[0]]


@pytest.mark.parametrize("df", [0, 1, 7, 10_000])
def test_one_term_order_does_not_depend_on_its_frequency(df):
    docs = {"a": "tide tide", "b": "tide and a longer line", "c": "tide " * 5, "d": "nothing"}
    base = [s.id for s in rank.bm25(docs, ["tide"], {}, 0)]
    assert [s.id for s in rank.bm25(docs, ["tide"], {"tide": df}, 10_000)] == base


async def test_a_word_everywhere_is_checked_on_the_text(app, new_user, monkeypatch):
    """A word in ``DF_CAP`` messages or more is not asked of the index when a rarer word is in
    the query: the rarer words' matches are filtered by it on their text (also as the prefix
    being typed), with the same results as the index's own AND."""
    monkeypatch.setattr(index, "DF_CAP", 4)
    u = await new_user()
    cid = await new_conv(u, "Notes")
    ids = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "ferry to the harbour"},
            {"role": "user", "text": "the ferry was late"},
            {"role": "user", "text": "ferry ferry"},
            {"role": "user", "text": "harbour lights, no boat"},
            {"role": "user", "text": "ferrymen of the harbour"},
            {"role": "user", "text": "the ferry schedule"},
        ],
    )
    asked: list[list[str]] = []
    real = index.newest_hits

    async def spy(c, owner, terms, **kw):
        asked.append(list(terms))
        return await real(c, owner, terms, **kw)

    monkeypatch.setattr(index, "newest_hits", spy)
    assert [h["id"] for h in (await _search(u, "harbour ferry."))["messages"]] == [ids[0]]
    assert asked == [["harbour"]]
    got = {h["id"] for h in (await _search(u, "harbour fer"))["messages"]}
    assert got == {ids[0], ids[4]}
    assert asked[-1] == ["harbour"]
    assert [h["id"] for h in (await _search(u, "lights harbour."))["messages"]] == [ids[3]]
    assert asked[-1] == ["lights", "harbour"]  # no word everywhere: the index's AND


def test_has_all():
    assert tm.has_all("Ferry to the harbour", ["harbour", "ferry"])
    assert not tm.has_all("ferrymen of the harbour", ["harbour", "ferry"])
    assert tm.has_all("ferrymen of the harbour", ["harbour", "ferry"], prefix_last=True)
    assert tm.has_all("我住在北京", ["北京", "住"]) and not tm.has_all("北方", ["北京"])


async def test_a_last_word_everywhere_is_not_a_prefix(app, new_user, monkeypatch):
    """A last word that is already in ``DF_CAP`` messages as a whole word is asked as that word
    (a prefix would make the index merge every longer word's entries); a shorter start of it is
    still a prefix."""
    monkeypatch.setattr(index, "DF_CAP", 3)
    u = await new_user()
    cid = await new_conv(u, "Notes")
    ids = await insert_chain(
        app,
        cid,
        [{"role": "user", "text": t} for t in ("ferrymen", "ferry", "a ferry", "the ferry")],
    )
    asked: list[bool] = []
    real = index.newest_hits

    async def spy(c, owner, terms, **kw):
        asked.append(kw["prefix_last"])
        return await real(c, owner, terms, **kw)

    monkeypatch.setattr(index, "newest_hits", spy)
    assert {h["id"] for h in (await _search(u, "ferry"))["messages"]} == set(ids[1:])
    assert {h["id"] for h in (await _search(u, "ferr"))["messages"]} == set(ids)
    assert asked == [False, True]


async def test_titles_ignore_case_as_lower_folds_it(app, new_user, db_url):
    """Title matching ignores case as the database's ``lower`` folds it: ASCII on both (SQLite
    compares with a plain ``LIKE``, which folds ASCII exactly as its ``lower`` does), other
    letters only on PostgreSQL, whose ``lower`` knows them — as before the plain ``LIKE``."""
    u = await new_user()
    lisbon = await new_conv(u, "Lisbon Trip ideas")
    paris = await new_conv(u, "Été à Paris")
    await new_conv(u, "100% sure_thing")
    for q in ("LISBON tRIP", "lisbon trip", "Trip id"):
        assert [c["id"] for c in (await _search(u, q))["conversations"]] == [lisbon]
    assert [c["id"] for c in (await _search(u, "Été à"))["conversations"]] == [paris]
    folded = [c["id"] for c in (await _search(u, "été À"))["conversations"]]
    assert folded == ([paris] if db_url.startswith("postgresql") else [])
    assert [c["title"] for c in (await _search(u, "0% S"))["conversations"]] == ["100% sure_thing"]
    assert (await _search(u, "0_s"))["conversations"] == []

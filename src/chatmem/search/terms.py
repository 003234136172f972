"""Turning text into ranking terms and full-text queries, identically for both databases (pure).

The index (``db/fulltext.py``, migration 0008) holds each message's text, its CJK terms and its scope
tokens. This module builds what is asked of it: word tokens as FTS5's ``unicode61`` tokenizer and
PostgreSQL's ``simple`` configuration see them (lower-cased), stop words dropped for ranking, a
query's CJK runs as bigrams (or the character itself when the run is one character long, so "北京"
matches wherever it occurs), the scope tokens (user, conversation, agent) that make "this
conversation" and "this user" index lookups, and the FTS5 ``MATCH`` / PostgreSQL ``tsquery``
strings. Terms are alphanumeric only (recall's forms terms: alphanumeric + ``~``), so no user
input ever reaches a query's syntax.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..db.fulltext import CJK_RUN as _CJK_RUN
from ..db.fulltext import cjk_terms

_WORD = re.compile(r"[^\W_]+")
NO_AGENT = "noagent"  # the scope token of messages outside agent conversations
MAX_QUERY_TERMS = 32

#: Words too common to carry meaning in a ranking query (English) and Chinese function characters.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further get got had hadn has hasn have haven having he her here
    hers herself him himself his how i if in into is isn it its itself just let ll me more most
    mustn my myself no nor not now of off on once only or other ought our ours ourselves out over
    own re really s same shan she should shouldn so some such t than that the their theirs them
    themselves then there these they this those through to too under until up us very was wasn we
    were weren what when where which while who whom why will with won would wouldn you your yours
    yourself yourselves d m ve y yes yeah oh ok okay hi hey hello thanks thank please sure well
    like know think one thing things go going really much many lot""".split()
) | frozenset(
    "的 了 是 我 你 他 她 它 们 在 有 和 就 不 也 都 这 那 吗 呢 吧 啊 么 个 很 还 又".split()
)


def fold(text: str) -> str:
    """Lower-case, as both engines do (FTS5 ``unicode61 remove_diacritics 0`` and PostgreSQL's
    ``simple`` configuration). Diacritics are kept on both: PostgreSQL can only strip them with the
    ``unaccent`` extension, which is not immutable, and the two dialects must agree on a match."""
    return text.lower()


def scope_token(identifier: str | None) -> str:
    """The index token for a user, conversation or agent id (``usr_0a1b`` → ``usr0a1b``), exactly
    as the index computes it (``lower(replace(id, '_', ''))``); ``index`` refuses tokens that are
    not alphanumeric, since the engines would split them."""
    if not identifier:
        return NO_AGENT
    return identifier.lower().replace("_", "")


def words(text: str) -> list[str]:
    """Word tokens (non-CJK) as the index sees them, in order, stop words included."""
    return _WORD.findall(fold(_CJK_RUN.sub(" ", text)))


#: Tokenising is most of ranking's cost and the same turns come back turn after turn (a
#: conversation's candidates, its verbatim tail): texts up to ``CACHED_CHARS`` long are memoised
#: as a ``Bag`` (each term's count), ``TERMS_CACHE`` of them (about 12 KB for a text of 1,000
#: characters, its words included: 50 MB if every one were that long, typical turns a fraction);
#: longer ones are rare and tokenised each time.
TERMS_CACHE = 4096
CACHED_CHARS = 1000


#: ASCII text's words, as ``_WORD`` finds them, by lower-casing letters and blanking everything
#: else but digits in one ``str.translate``, then splitting: a ``Bag`` of a 550-character turn
#: in 9 µs instead of 17 with a regular expression. ASCII text has no CJK terms — most
#: messages, and the cold candidates of a long history's turns.
_ASCII_WORDS = str.maketrans(
    {chr(i): chr(i).lower() if chr(i).isalnum() else " " for i in range(128)}
)


def _ascii_words(text: str) -> list[str]:
    return text.translate(_ASCII_WORDS).split()


def doc_terms(text: str) -> tuple[str, ...]:
    """Every term a message is indexed under: its words and its CJK characters and bigrams."""
    if text.isascii():
        return tuple(_ascii_words(text))
    return (*words(text), *cjk_terms(text).split())


class Bag:
    """A text's terms as ranking reads them: how often each occurs (``counts``) and how many
    there are (``length``, BM25's document length).

    Why counts and not the token list: BM25 asks each candidate for every query term's
    frequency, a term ending in ``FORMS`` for up to eight words — on a token tuple a scan each
    (``tuple.count``: 2,600 scans of ~100 tokens per turn at 10,000 messages, most of recall's
    Python time), on counts a lookup each."""

    __slots__ = ("counts", "length")

    def __init__(self, toks: Sequence[str]) -> None:
        self.counts: dict[str, int] = Counter(toks)
        self.length = len(toks)

    def count(self, term: str) -> int:
        """How often the text holds ``term`` (a forms term: any of its forms)."""
        if not term.endswith(FORMS):
            return self.counts.get(term, 0)
        return sum(self.counts.get(f, 0) for f in forms(term))

    def has(self, term: str) -> bool:
        """Whether the text is indexed under ``term`` (a forms term: under one of its forms)."""
        if not term.endswith(FORMS):
            return term in self.counts
        return any(f in self.counts for f in forms(term))


def _bag(text: str) -> Bag:
    return Bag(_ascii_words(text) if text.isascii() else doc_terms(text))


_cached_bag = lru_cache(maxsize=TERMS_CACHE)(_bag)


def bag(text: str) -> Bag:
    """``text``'s ``Bag`` (memoised for texts up to ``CACHED_CHARS``)."""
    return _cached_bag(text) if len(text) <= CACHED_CHARS else _bag(text)


@lru_cache(maxsize=TERMS_CACHE)
def _cached_content(text: str) -> frozenset[str]:
    return frozenset(_cached_bag(text).counts) - STOPWORDS


def content_terms(text: str) -> frozenset[str]:
    """The distinct terms of ``doc_terms`` that are not stop words."""
    if len(text) <= CACHED_CHARS:
        return _cached_content(text)
    return frozenset(doc_terms(text)) - STOPWORDS


#: A term ending in ``FORMS`` stands for a word's usual English forms (``forms``): recall asks
#: for a question's longer content words that way (``stemmed``). Exact words, never a prefix
#: scan: FTS5 and GIN answer a prefix by merging every matching word's entries in the whole
#: index, which grows with every user's messages.
FORMS = "~"
STEM_SUFFIXES = ("ing", "ed", "s")
MIN_STEM = 5
_ENDINGS = ("", "s", "ed", "ing")


def stemmed(word: str) -> str:
    """A content word as a forms term, a common English ending taken off first:
    "volunteering" → "volunteer~" (volunteer, volunteers, volunteered, volunteering …),
    "studying" → "study~" (… studies, studied). Words shorter than ``MIN_STEM`` letters, stop
    words and anything but ASCII letters stay whole words."""
    if len(word) < MIN_STEM or not (word.isascii() and word.isalpha()) or word in STOPWORDS:
        return word
    for suffix in STEM_SUFFIXES:
        if word.endswith(suffix) and not word.endswith("ss"):
            if len(word) - len(suffix) >= MIN_STEM:
                word = word[: -len(suffix)]
            break
    return word + FORMS


@lru_cache(maxsize=1024)
def forms(term: str) -> tuple[str, ...]:
    """The words a term stands for: itself, or a forms term's stem with the usual endings (a
    final e or y, and a doubled last consonant, handled: move → moving, study → studies,
    stop → stopped)."""
    if not term.endswith(FORMS):
        return (term,)
    stem = term[: -len(FORMS)]
    out = [stem + e for e in _ENDINGS]
    if stem.endswith(("s", "x", "z", "ch", "sh")):
        out.append(stem + "es")
    if stem.endswith("e"):
        out += [stem + "d", stem[:-1] + "ing"]
    if stem.endswith("y"):
        out += [stem[:-1] + "ies", stem[:-1] + "ied"]
    vowels = "aeiou"
    if stem[-1] not in vowels + "wxy" and stem[-2] in vowels and stem[-3] not in vowels:
        out += [stem + stem[-1] + "ed", stem + stem[-1] + "ing"]  # plan → planned
    return tuple(dict.fromkeys(out))


def searchable(term: str) -> bool:
    """Whether ``term`` may be sent to the index: alphanumeric, or alphanumeric + ``FORMS``."""
    return (term[: -len(FORMS)] if term.endswith(FORMS) else term).isalnum()


def count(term: str, text: str) -> int:
    """How often ``text`` holds ``term`` (a forms term: any of its forms)."""
    return bag(text).count(term)


def occurs(term: str, text: str) -> bool:
    """Whether ``text`` is indexed under ``term`` (a forms term: under one of its forms)."""
    return bag(text).has(term)


def has_all(text: str, terms: Sequence[str], *, prefix_last: bool = False) -> bool:
    """Whether ``text`` is indexed under every term (the last one as a prefix with
    ``prefix_last``): the index's own match, checked on a message's text."""
    found = bag(text).counts
    last = len(terms) - 1 if prefix_last else -1
    return all(
        t in found or (i == last and any(w.startswith(t) for w in found))
        for i, t in enumerate(terms)
    )


def query_terms(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Distinct terms of a query, in order of first appearance, at most ``MAX_QUERY_TERMS``.

    A CJK run of one character is that character; a longer run gives its bigrams (so "北京大学"
    looks for 北京, 京大, 大学). Stop words are dropped unless ``keep_stopwords`` — a query made
    only of stop words keeps them, so "what is it" still finds something.
    """
    found = list(words(text))
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            found.append(run)
        else:
            found.extend(run[i : i + 2] for i in range(len(run) - 1))
    seen: dict[str, None] = {}
    for t in found:
        seen.setdefault(t, None)
    terms = list(seen)
    if not keep_stopwords:
        content = [t for t in terms if t not in STOPWORDS]
        terms = content or terms
    return terms[:MAX_QUERY_TERMS]


def _quoted(terms: Iterable[str]) -> list[str]:
    out = []
    for t in terms:
        if t and searchable(t):
            words = [f'"{f}"' for f in forms(t)]
            out.append(words[0] if len(words) == 1 else "(" + " OR ".join(words) + ")")
    return out


#: A scope: index tokens every result carries; a tuple of tokens is satisfied by any one of them
#: (the conversations of a workspace the caller may see).
Scope = Sequence[str | tuple[str, ...]]


def fts5_match(
    terms: Sequence[str],
    scope: Scope,
    *,
    all_terms: bool = False,
    prefix_last: bool = False,
) -> str:
    """An FTS5 ``MATCH`` expression: every scope token AND any (or all) of ``terms``.

    Terms are matched in the text and CJK columns, scope tokens only in the scope column;
    ``prefix_last`` lets the last term match as a prefix.
    """
    quoted = _quoted(terms)
    if not quoted:
        raise ValueError("no searchable terms")
    if prefix_last:
        quoted[-1] += " *"
    join = " AND " if all_terms else " OR "
    expr = "{body cjk} : (" + join.join(quoted) + ")"
    return " AND ".join([fts5_scope(scope), expr]) if scope else expr


def fts5_scope(scope: Scope) -> str:
    """An FTS5 ``MATCH`` expression for every row of a scope."""
    parts = [_quoted(s if isinstance(s, tuple) else [s]) for s in scope]
    return " AND ".join("scope : (" + " OR ".join(q) + ")" for q in parts if q)


def tsquery(terms: Sequence[str], *, all_terms: bool = False, prefix_last: bool = False) -> str:
    """The text given to PostgreSQL's ``to_tsquery`` for ``terms`` (alphanumeric: no escaping)."""
    quoted = [
        "(" + " | ".join(f"'{f}'" for f in forms(t)) + ")" if t.endswith(FORMS) else f"'{t}'"
        for t in terms
        if t and searchable(t)
    ]
    if not quoted:
        raise ValueError("no searchable terms")
    if prefix_last:
        quoted[-1] += ":*"
    return (" & " if all_terms else " | ").join(quoted)


def scope_tsquery(scope: Scope) -> str:
    """A ``tsquery`` literal (no normalisation) requiring every scope token."""
    parts = [[x for x in (s if isinstance(s, tuple) else [s]) if x and x.isalnum()] for s in scope]
    return " & ".join("(" + " | ".join(f"'{x}'" for x in q) + ")" for q in parts if q)

"""How the message index derives its terms: the part of the index definition written in Python.

Both full-text engines split text at spaces and punctuation, so a run of Chinese or Japanese
characters ("我住在北京") would be one giant token and "北京" could never be found. Each index row
therefore carries, beside the text, a field of **CJK terms**: every CJK character on its own and
every pair of adjacent characters (``cjk_terms``). SQLite calls this function from the index
triggers (it is registered on every connection as ``chatmem_cjk_terms``); PostgreSQL has an
equivalent SQL function created by migration 0008, and ``tests/test_search_index.py`` checks the
two agree.

SQLite deletes an index entry by re-supplying the values it indexed, so **changing this function
requires a migration that rebuilds the index**.
"""

from __future__ import annotations

import re

#: CJK ideographs (incl. extension A and compatibility), kana and the iteration mark. Hangul is
#: written with spaces between words, so the engines' own word splitting serves it.
CJK_CLASS = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")


def cjk_terms(text: str | None) -> str:
    """Each CJK character and each adjacent pair of ``text``, space-separated ("" for none)."""
    if not text:
        return ""
    out: list[str] = []
    for run in CJK_RUN.findall(text):
        for i, ch in enumerate(run):
            out.append(ch)
            if i + 1 < len(run):
                out.append(run[i : i + 2])
    return " ".join(out)


def register_sqlite_functions(dbapi_conn) -> None:
    """Install the SQL functions the index triggers call on a new SQLite connection."""
    dbapi_conn.create_function("chatmem_cjk_terms", 1, cjk_terms, deterministic=True)

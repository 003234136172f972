"""PostgreSQL's ``chatmem_cjk_terms`` returns at once for text without CJK characters.

Why: every row written to ``messages`` computes the stored ``search_tsv`` (migration 0008), and the
SQL function behind its CJK part ran ``regexp_matches`` + ``generate_series`` for every row — about
29 µs a row even for plain ASCII, 0.3 s of a 10,000-message fork (issue 18, bench/scale.py). The
same function in PL/pgSQL first tests the text against the CJK class (a simple expression, no
executor) and only runs the original query when there is a CJK character: ~10× cheaper per row
for non-CJK text, identical output for all text (``tests/test_search_index.py`` compares it with
the Python function). Same name, signature and volatility, so the generated column and the index
keep using it without a rewrite. SQLite has nothing to change (its function is Python).

Revision ID: 0017
Revises: 0016
"""

import importlib

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_m0008 = importlib.import_module("chatmem.db.migrations.versions.0008_message_fulltext")
CJK_CLASS = _m0008.CJK_CLASS

#: the query of migration 0008's SQL function (its body), run only when the text has a CJK character
_TERMS = _m0008.PG_CJK_FUNCTION.split("$fn$")[1]

PG_CJK_FUNCTION = f"""
CREATE OR REPLACE FUNCTION chatmem_cjk_terms(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
BEGIN
    IF t !~ '[{CJK_CLASS}]' THEN
        RETURN '';
    END IF;
    RETURN ({_TERMS});
END
$fn$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_CJK_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_m0008.PG_CJK_FUNCTION)

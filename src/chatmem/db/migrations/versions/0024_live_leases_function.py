"""PostgreSQL: ``chatmem_live_leases``, the count of a principal's live generation leases in a
snapshot of its own.

Why (issue 18, "a turn does less"): a turn's start on PostgreSQL was a transaction of four
round trips — BEGIN, the conversation and the user's row locked, the opening statement (the
lease, the two messages, the conversation's UPDATE: ``generation/start_store``), COMMIT —
because the turn cap counts leases, and that count must see every lease committed by the
user's turn that held the lock before: a statement's snapshot is taken when it starts, before
it waits for a lock, so a count in the statement that takes the lock would miss it. A VOLATILE
function takes a fresh snapshot for each query it runs (READ COMMITTED), so a count made by
this function on the locked row's output — after the lock was granted — sees it. With it the
lock, the count and the opening writes are one statement outside a transaction
(``start_store.open_turn`` given a ``lock``): two round trips a start, the read before it
included, instead of four.

``LANGUAGE sql`` with a ``FROM``: never inlined into the calling statement (only a bare
expression is), so its snapshot stays its own. The same condition as ``leases.live_count``
(through the expiry index, as there: the live leases are the running turns). Downgrade drops it. SQLite: nothing (``BEGIN IMMEDIATE`` serialises every writer, and
its start keeps its statements).

Revision ID: 0024
Revises: 0023
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE OR REPLACE FUNCTION chatmem_live_leases(p_principal text, p_now bigint)
RETURNS bigint LANGUAGE sql VOLATILE AS $fn$
    SELECT count(*) FROM conversation_generation_leases
    WHERE principal_id = p_principal AND expires_at > p_now
$fn$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP FUNCTION chatmem_live_leases(text, bigint)")

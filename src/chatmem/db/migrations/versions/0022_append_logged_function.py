"""PostgreSQL: ``chatmem_append_logged``, the log-mode append's one statement as a function whose
plan is made once per connection.

Why (issue 18): a log-mode append on PostgreSQL is one statement (``conversations/append_store``:
the message's ``INSERT … SELECT`` with the counter UPDATE and the follow-up jobs as CTEs). The
engine sets ``plan_cache_mode = force_custom_plan`` for every connection (``db/engine.py``: the
skewed per-conversation reads need their parameters' plans), so that statement was planned anew
on every append, its four foreign-key checks too: 0.6–1.4 ms of planning by ``EXPLAIN ANALYZE``,
the statement alone 1.8 ms against 1.1 with ``auto`` (median, one connection, interleaved; the
largest single share of an append's wall time left). Changing the mode for one statement from
the client costs round trips (``SET``/``RESET``, or a transaction around ``SET LOCAL``); a
function's own settings cost none: PL/pgSQL keeps a statement's plan for the
connection's life, and the function's ``SET`` clause is in force while it runs, the foreign-key
checks its INSERT fires included. The call is one statement, as the append was.

Its plan is made once, with no parameter values and whatever the tables' statistics are at that
moment (a new deployment: empty tables), and kept. So the plan must not depend on them: every
row the statement touches is found through a unique key (the conversation, the parent, the
parent's jump, the membership, the conversation's UPDATE, the job's dedupe key), and

- ``SET enable_seqscan = off``: no plan reads a table through because it was tiny when planned
  (none did in the test, with or without it: it is there so that none can);
- the parent is matched to the conversation with ``IS NOT DISTINCT FROM`` (both are NOT NULL:
  the same test as ``=``), which the planner cannot use to reach the parent through the
  conversation's index — with ``=`` it may (it did, with empty tables), and that plan reads the
  whole conversation on every append once it has grown;
- one static statement per place (``p_under``: the active leaf, a given parent, a new root), so
  each is planned for its own join.

``tests/test_log_mode_fast.py`` asserts the statements' plans with many users' rows, and that the
function behaves as the statement-per-step path does. The body mirrors the SQLAlchemy statement
it replaces (SQLite still runs that: ``append_store._insert_select``): ``workspaces.store.
visible``'s test, ``append_store.child_place`` (``dag.jump_for``), ``store.counted``, and the job
INSERT that skips a queued dedupe key; a change to one of them needs a migration that replaces
this function. The jobs' rows come as a JSON array of ``jobs`` rows (``jobs.queue.job_rows``).

The function returns the stored row (``SETOF messages``: a column added to ``messages`` later is
returned without a new migration). Downgrade drops it. SQLite: nothing (no planning cost there).

Revision ID: 0022
Revises: 0021
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

#: the append for one place of the new message; ``{parent}`` joins its parent ``p``, ``{found}``
#: is true when the place exists (else nothing is written and the caller takes its step path)
_APPEND = """
    RETURN QUERY
    WITH ins AS (
        INSERT INTO messages AS m (id, conversation_id, parent_id, role, blocks, search_text,
            created_at, user_id, author_id, agent_id, metadata, model_id, depth, jump_id,
            jump_depth)
        SELECT p_id, conv.id, p.id, p_role, p_blocks, p_text, p_created,
            CASE WHEN conv.workspace_id <> '' THEN conv.user_id ELSE p_uid END,
            CASE WHEN conv.workspace_id <> '' THEN p_uid ELSE '' END,
            conv.agent_id, p_metadata, p_model, coalesce(p.depth + 1, 0),
            CASE WHEN p.depth - a.jd = a.jd - b.jjd THEN b.jj ELSE p.id END,
            CASE WHEN p.depth - a.jd = a.jd - b.jjd THEN b.jjd ELSE p.depth END
        FROM conversations AS conv
        LEFT JOIN messages AS p ON {parent}
        LEFT JOIN messages AS jr ON jr.id = p.jump_id
        CROSS JOIN LATERAL (SELECT coalesce(p.jump_id, p.id) AS j,
            CASE WHEN p.jump_id IS NULL THEN p.depth ELSE p.jump_depth END AS jd) AS a
        CROSS JOIN LATERAL (SELECT coalesce(jr.jump_id, a.j) AS jj,
            CASE WHEN jr.jump_id IS NULL THEN a.jd ELSE jr.jump_depth END AS jjd) AS b
        WHERE conv.id = p_cid
            AND (conv.workspace_id = '' AND conv.user_id = p_uid
                OR conv.workspace_id <> '' AND EXISTS (
                    SELECT FROM workspace_members AS wm
                    WHERE wm.workspace_id = conv.workspace_id AND wm.user_id = p_uid
                        AND (conv.is_public = 1 OR conv.user_id = p_uid
                            OR wm.role IN ('owner', 'admin'))))
            AND {found}
        FOR UPDATE OF conv
        RETURNING m.*
    ), touch AS (
        UPDATE conversations AS c
        SET active_leaf_id = ins.id, updated_at = p_now, message_count = c.message_count + 1,
            last_message_at = CASE WHEN c.last_message_at IS NULL
                OR c.last_message_at < ins.created_at THEN ins.created_at
                ELSE c.last_message_at END
        FROM ins WHERE c.id = ins.conversation_id
    ), queued AS (
        INSERT INTO jobs (id, kind, payload, dedupe_key, status, run_after, max_attempts,
            created_at, updated_at)
        SELECT j.id, j.kind, j.payload, j.dedupe_key, j.status, j.run_after, j.max_attempts,
            j.created_at, j.updated_at
        FROM ins, jsonb_to_recordset(p_jobs) AS j(id text, kind text, payload jsonb,
            dedupe_key text, status text, run_after bigint, max_attempts integer,
            created_at bigint, updated_at bigint)
        ON CONFLICT (dedupe_key) WHERE status = 'queued' DO NOTHING
    )
    SELECT ins.* FROM ins;"""

_SAME_CONVERSATION = "p.conversation_id IS NOT DISTINCT FROM conv.id"
_PLACES = {
    "leaf": (
        f"p.id = conv.active_leaf_id AND {_SAME_CONVERSATION}",
        "(conv.active_leaf_id IS NULL OR p.id IS NOT NULL)",
    ),
    "given": (f"p.id = p_parent AND {_SAME_CONVERSATION}", "p.id IS NOT NULL"),
    "root": ("false", "true"),
}

_SIGNATURE = (
    "chatmem_append_logged(p_cid text, p_uid text, p_under text, p_parent text, p_id text, "
    "p_role text, p_blocks jsonb, p_text text, p_created bigint, p_metadata jsonb, "
    "p_model text, p_now bigint, p_jobs jsonb)"
)


def function() -> str:
    branches = "\n    ELS".join(
        f"IF p_under = '{under}' THEN" + _APPEND.format(parent=parent, found=found)
        for under, (parent, found) in _PLACES.items()
    )
    return f"""
CREATE FUNCTION {_SIGNATURE}
RETURNS SETOF messages LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $fn$
BEGIN
    {branches}
    ELSE
        RAISE EXCEPTION 'chatmem_append_logged: unknown place %', p_under;
    END IF;
END
$fn$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(function())


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "DROP FUNCTION chatmem_append_logged(text, text, text, text, text, text, jsonb, text, "
        "bigint, jsonb, text, bigint, jsonb)"
    )

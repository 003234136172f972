"""A fork answers before its copy runs, and nothing ever sees the copy half done.

Why it exists (issue 18, "a fork of 10,000 messages in ≤ 0.2 s"): a fork's rows must be its own
(it is edited, rated, shared and deleted apart from its source), and on PostgreSQL copying
10,000 of them is 0.6–0.9 s of index and foreign-key work that no statement shape removes
(``bench/fork_floor.py``). So the fork's transaction only plans the copy
(``fork_store.plan_copy``: one narrow walk) and writes the new conversation complete — title,
counters, leaf, the ids its messages will have — with the plan (migration 0023). The copy runs
right after the commit, in this process (``kick``), and as a queued job (``KIND``) in case this
process dies first; whichever comes first copies, the other finds nothing to do.

Until it has run, the conversation is *pending*, and the rules that keep that invisible are:

- **Reads that show it** — the conversation itself and the first page of its path (what an app
  opens first) — are answered from the source's rows, mapped exactly as the copy will store
  them (``fork_store.copy_rows``; a test compares the two byte for byte).
- **Everything else that reads it copies it first**: ``store.get_conversation`` on a write
  transaction copies in that transaction (it holds what it needs), as does a turn's first
  statement; on a read transaction it raises ``ForkPending``, and the HTTP layer
  (``forkwait.py``) copies and answers the request again (the MCP tools do the same); a caller
  outside HTTP gets a 409 ``fork_copying`` to retry.
- **Changing or deleting the source copies its pending forks first**: every change of a
  conversation's messages locks it (``get_conversation(for_change=True)``: deleting it, a round
  of it, editing or rating a message of it) and then looks for its pending forks; the fork holds
  the source's row ``FOR SHARE`` while it plans (PostgreSQL; SQLite has one writer), so a change
  either ran before the plan or sees the fork. A user's deletion copies the forks of the user's
  conversations first. So a fork always holds the path as it was when the fork answered, and the
  foreign key from ``fork_source_id`` (no cascade) makes a deleting path that forgot fail instead
  of losing it.
- Search, recall and the vector index see the fork's messages once copied (about a second for
  10,000 messages: ``bench/fork_open.py``); an export copies the forks it covers first.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncConnection

from ..db.engine import Database
from ..db.rows import Columns
from ..embeddings import schedule_embedding
from ..errors import Conflict
from ..jobs.queue import enqueue
from . import fork_store
from .fork_store import ForkPlan

log = logging.getLogger(__name__)

#: the queued job that copies a fork if the process that made it did not (payload: conversation_id)
KIND = "conversation.fork_copy"

_running: set[asyncio.Task] = set()


class ForkPending(Conflict):
    """A read reached a fork whose copy has not run: copy it (``settle``), then read again."""

    code = "fork_copying"

    def __init__(self, cid: str) -> None:
        super().__init__(
            "the fork's messages are being copied: retry in a moment",
            details={"conversation_id": cid},
            # forkwait.py answers the request again once copied; others see a 409 to retry
            headers={"Retry-After": "1", "X-Chatmem-Fork-Pending": cid},
        )
        self.cid = cid


async def settle_in(c: AsyncConnection, cid: str) -> bool:
    """Copy the pending fork ``cid`` in the caller's write transaction; False if it was not
    pending (copied already, or gone). On PostgreSQL the fork's row is locked first: two copiers
    of one fork copy once."""
    row = await fork_store.pending_fork(c, cid, lock=True)
    if row is None or row.fork_plan is None:
        return False
    await fork_store.copy_planned(c, row.fork_source_id, ForkPlan.loads(row.fork_plan), row)
    await schedule_embedding(c, cid)
    return True


async def settle(db: Database, cid: str) -> bool:
    """Copy the pending fork ``cid`` in its own write transaction (see ``settle_in``)."""
    async with db.write() as c:
        return await settle_in(c, cid)


async def settle_sources_in(c: AsyncConnection, source_id: str) -> None:
    """Copy every pending fork of this conversation, in the caller's write transaction: what
    changing or deleting it does first."""
    for cid in await fork_store.pending_forks_of(c, source_id):
        await settle_in(c, cid)


async def settle_user_in(c: AsyncConnection, user_id: str) -> bool:
    """Copy the pending forks the user owns or whose source the user owns (before the user's
    deletion or export); True if there was one."""
    pending = await fork_store.pending_forks_touching_user(c, user_id)
    for cid in pending:
        await settle_in(c, cid)
    return bool(pending)


async def begin(c: AsyncConnection, cid: str, source_id: str, plan: ForkPlan) -> None:
    """Make the new conversation ``cid`` a pending fork of ``source_id`` (in the fork's
    transaction), with the job that copies it should ``kick``'s copy not run."""
    await fork_store.mark_pending(c, cid, source_id, plan)
    await enqueue(c, KIND, {"conversation_id": cid}, dedupe_key=f"fork:{cid}")


def kick(db: Database, cid: str) -> None:
    """Copy the fork ``cid`` now, beside the request that made it (after its commit)."""
    task = asyncio.get_running_loop().create_task(_settle_logged(db, cid))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def copies_done() -> None:
    """Wait for the copies ``kick`` started on this event loop (a stopping runtime; tests)."""
    loop = asyncio.get_running_loop()
    while mine := [task for task in _running if task.get_loop() is loop]:
        await asyncio.gather(*mine, return_exceptions=True)


async def _settle_logged(db: Database, cid: str) -> None:
    try:
        await settle(db, cid)
    except Exception:  # the queued job copies it (or the next read of it does)
        log.exception("copying fork %s failed; its job will retry", cid)


async def fork_copy_job(rt, payload: dict) -> None:
    """The queued copy (``KIND``): nothing to do when the copy already ran."""
    await settle(rt.db, payload["conversation_id"])


async def first_page(c: AsyncConnection, conv, limit: int) -> list[Columns]:
    """The newest ``limit`` messages of the pending fork ``conv`` (its row), oldest first, read
    from its source and mapped as the copy will store them."""
    plan = ForkPlan.loads(conv.fork_plan)
    return [Columns(m) for m in await fork_store.copy_rows(c, conv, plan, limit)]

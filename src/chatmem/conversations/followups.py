"""What appending messages schedules: the background work derived from a conversation's history.

Why it exists: every append — a generated turn that completed, or a message logged without
generation — must lead to the same derived work (memory extraction, compaction, and whatever else
reads the history later, such as embeddings), so log mode is not a second-class path. This module
is the one place that decides it: ``after_append`` is called in the transaction that wrote the
message(s), so the jobs commit with them or not at all.

Two speeds:

- a **generated turn** schedules the work at once (``delay_ms=0``): the next turn should already
  see what this one taught;
- a **log-mode append** (``generate: false``, ``role: assistant``) opens a short window instead:
  one ``followups`` job per conversation, deduplicated while it is queued (``followups:<cid>``) and
  due ``delay_ms`` later. Every append inside the window finds it queued and adds nothing, so a bulk
  import of 10,000 messages produces one job per window (a rate bounded by time, not by message
  count). When the window closes the job fans out to the per-domain jobs, themselves deduplicated,
  and the memory job catches up over everything appended meanwhile in batches.

The per-domain jobs keep their own kinds, dedupe keys and retries: ``memory.extract``
(``memory:<cid>``), ``compaction`` (``context.service.enqueue_compaction``) and the embedding job
(``embeddings.schedule_embedding``, a no-op when embeddings are off; it has its own debounce, so
it is queued directly on every append rather than through the window).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from ..context.service import compaction_job
from ..embeddings import schedule_embedding
from ..jobs.queue import Job, enqueue_many

FOLLOWUPS = "followups"
MEMORY_EXTRACT = "memory.extract"


async def after_append(
    c: AsyncConnection,
    *,
    conversation_id: str,
    user_id: str,
    message_id: str,
    delay_ms: int = 0,
    also: tuple[Job, ...] = (),
) -> None:
    """Schedule the derived work for messages just appended (in the caller's transaction):
    at once when ``delay_ms`` is 0, else through one debounced ``followups`` job. ``also``: the
    caller's own jobs, queued in the same statement (a first turn's title)."""
    payload = {"conversation_id": conversation_id, "user_id": user_id, "message_id": message_id}
    await schedule_embedding(c, conversation_id)  # debounced by the embeddings settings
    await enqueue_many(c, jobs_for(payload, delay_ms, also))


def jobs_for(payload: dict, delay_ms: int = 0, also: tuple[Job, ...] = ()) -> list[Job]:
    """The jobs ``after_append`` queues besides the embedding job (``schedule_embedding``), for
    a caller that queues them in its own statement (``append_store.append_logged``)."""
    if delay_ms > 0:
        cid = payload["conversation_id"]
        return [Job(FOLLOWUPS, payload, f"followups:{cid}", delay_ms), *also]
    return [*now_jobs(payload), *also]


def now_jobs(payload: dict) -> list[Job]:
    """The per-domain jobs for one conversation (each deduplicated while queued). Anything that
    must follow every append — generated or logged — is added here, once."""
    cid = payload["conversation_id"]
    return [Job(MEMORY_EXTRACT, payload, f"memory:{cid}"), compaction_job(cid)]


async def schedule_now(c: AsyncConnection, payload: dict) -> None:
    """``now_jobs``, queued in one statement."""
    await enqueue_many(c, now_jobs(payload))


async def followups_job(rt, payload: dict) -> None:
    """The window of log-mode appends closed: schedule the per-domain jobs."""
    async with rt.db.write() as c:
        await schedule_now(c, payload)

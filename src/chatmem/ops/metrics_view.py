"""The metrics that are read, not counted: set just before each scrape.

Why it exists: queue depth and age, workers alive, turns running and connection-pool usage are
facts of the moment; counting them as they change would spread bookkeeping through the code.
``refresh`` reads them (one small query on the job queue, one on the heartbeats) and sets the
gauges; ``exposition`` then renders the registry. The queue gauges describe the whole database,
so every replica reports the same values: dashboards take ``max`` over instances.
"""

from __future__ import annotations

import logging

from ..jobs import heartbeat
from ..jobs.worker import queue_stats
from ..runtime import Runtime

log = logging.getLogger(__name__)


def _pool(rt: Runtime) -> None:
    m, pool = rt.telemetry.metrics, rt.db.engine.pool
    size = getattr(pool, "size", None)
    if callable(size):
        m.db_pool_size.set(size())
        m.db_pool_checked_out.set(pool.checkedout())  # type: ignore[attr-defined]
        m.db_pool_overflow.set(pool.overflow())  # type: ignore[attr-defined]
        m.db_pool_idle.set(pool.checkedin())  # type: ignore[attr-defined]


async def refresh(rt: Runtime) -> None:
    m = rt.telemetry.metrics
    m.turns_running.set(len(rt.generation.runners))
    _pool(rt)
    try:
        async with rt.db.read() as c:
            counts, oldest = await queue_stats(c)
            max_age = int(max(rt.settings.ready_worker_max_age_s, 60) * 1000)
            alive, _ = await heartbeat.alive(c, max_age)
    except Exception as e:  # the scrape still answers with what this process knows
        log.warning("metrics: database read failed: %s", type(e).__name__)
        return
    m.jobs.clear()
    m.job_oldest_age.clear()
    kinds = set(rt.job_handlers)
    for kind, status, n in counts:
        kinds.add(kind)
        m.jobs.labels(kind, status).set(n)
    for kind in kinds:
        m.job_oldest_age.labels(kind).set(oldest.get(kind, 0.0))
    m.workers_alive.set(alive)


async def exposition(rt: Runtime) -> bytes:
    await refresh(rt)
    return rt.telemetry.metrics.exposition()

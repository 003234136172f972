"""Liveness and readiness: what load balancers and orchestrators ask a process.

- **health** (``/api/health``): the process answers and its database does — a liveness probe.
- **ready** (``/api/ready``): send traffic here? The database answers, its schema is the one this
  code expects (``alembic_version`` = the migrations' head: a replica of a newer release waits
  while an older one has not migrated yet, and an older one refuses a database migrated past
  it), and a job worker's heartbeat was seen within ``ready_worker_max_age_s`` (0 = not
  checked) — without one, titles, memories and compaction silently stop. Each check reports
  itself, so a 503 says which one failed.
"""

from __future__ import annotations

import logging

from ..db import migrate
from ..jobs import heartbeat
from ..runtime import Runtime

log = logging.getLogger(__name__)


async def health(rt: Runtime) -> dict:
    async with rt.db.read() as c:
        await c.exec_driver_sql("SELECT 1")
    return {"ok": True, "database": rt.db.dialect}


async def readiness(rt: Runtime) -> dict:
    s = rt.settings
    expected = migrate.head()
    checks: dict[str, dict] = {}
    try:
        async with rt.db.read() as c:
            await c.exec_driver_sql("SELECT 1")
            checks["database"] = {"ok": True, "detail": rt.db.dialect}
            revision = await migrate.current(c)
            checks["migrations"] = {
                "ok": revision == expected,
                "detail": f"at {revision or 'no schema'}, expected {expected}",
            }
            if s.ready_worker_max_age_s > 0:
                n, age_ms = await heartbeat.alive(c, int(s.ready_worker_max_age_s * 1000))
                seen = "never" if age_ms is None else f"{age_ms / 1000:.1f} s ago"
                checks["workers"] = {
                    "ok": n > 0,
                    "detail": f"{n} alive (newest heartbeat {seen})",
                }
            else:
                checks["workers"] = {"ok": True, "detail": "not checked"}
    except Exception as e:
        log.warning("readiness: database check failed: %s", type(e).__name__)
        checks["database"] = {"ok": False, "detail": f"unreachable ({type(e).__name__})"}
    return {"ok": all(c["ok"] for c in checks.values()) and len(checks) == 3, "checks": checks}

"""Gate: SQL statements live in store modules (run by ``make lint``).

Why it exists: "every SQL statement of a domain lives in its store" (docs/architecture.md, "Where SQL
lives"). A service that builds its own ``select`` drifts from the store's queries, escapes their
owner scoping and cannot be read in one place. The gate parses every module under src/chatmem and
flags, outside the modules allowed to hold SQL:

- a call of SQLAlchemy's statement builders ``select``/``insert``/``update``/``delete``/``text``
  (imported from ``sqlalchemy`` or a dialect, or reached as ``sa.select`` and the like);
- a call of ``.execute(...)`` or ``.exec_driver_sql(...)`` on anything.

Allowed: every ``store.py`` and ``<part>_store.py`` (a store split along a seam when it outgrew
the ~600-line rule, e.g. ``conversations/tree_store.py``), modules of a ``store/`` package, the
migrations, the tables of
``db/schema/`` (``text()`` server defaults and partial-index conditions), and the
infrastructure modules listed in ``INFRASTRUCTURE`` below, each of which owns its own table(s) and is
the store for them (the list says which table each owns).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "chatmem"

BUILDERS = frozenset({"select", "insert", "update", "delete", "text"})
EXECUTORS = frozenset({"execute", "exec_driver_sql"})

# Infrastructure that owns its table(s): each is that table's store (docs/architecture.md).
INFRASTRUCTURE = frozenset(
    {
        "db/engine.py",  # connection setup: PRAGMAs, pool checks
        "db/migrate.py",  # alembic_version reads, the PostgreSQL advisory lock
        "db/singleton.py",  # service_leases: one process runs the chores
        "db/dialect.py",  # the insert-or-ignore switch every store uses
        "db/sqlite_driver.py",  # the SQLite driver adapter: runs every statement (DBAPI level)
        "db/hot.py",  # runs the stores' own prebuilt statements on the driver (no SQL of its own)
        "generation/leases.py",  # conversation_generation_leases: who drives a turn
        "generation/events.py",  # stream_events: the replayable event log
        "jobs/queue.py",  # jobs: enqueue (the one call every domain makes in its transaction)
        "jobs/worker.py",  # jobs: claim, visibility timeout, finish, reap, the admin listing
        "jobs/heartbeat.py",  # workers: heartbeats
        "context/lease.py",  # conversation_compaction_leases: one compaction at a time
        "search/index.py",  # the message full-text index (FTS5 / tsvector) and its id map
        "ops/health.py",  # readiness probe: SELECT 1 and the migration head
    }
)


def _is_store(rel: str) -> bool:
    parts = rel.split("/")
    # db/schema/ is the tables themselves (text() server defaults and partial-index conditions)
    return (
        parts[-1] == "store.py"
        or parts[-1].endswith("_store.py")  # a store split along a seam (conversations/tree_store)
        or "store" in parts[:-1]
        or "migrations" in parts
        or parts[:2] == ["db", "schema"]
    )


def _sqlalchemy_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Local names bound to SQL builders, and local aliases of sqlalchemy (or a dialect) modules."""
    builders: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            for a in node.names:
                if a.name in BUILDERS:
                    builders.add(a.asname or a.name)
                elif a.name in {"postgresql", "sqlite", "dialects"}:
                    modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("sqlalchemy"):
                    modules.add(a.asname or a.name.split(".")[0])
    return builders, modules


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def violations(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each SQL call in ``source``."""
    tree = ast.parse(source)
    builders, modules = _sqlalchemy_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in builders:
            yield node.lineno, f"{f.id}()"
        elif isinstance(f, ast.Attribute):
            if f.attr in EXECUTORS:
                yield node.lineno, f".{f.attr}()"
            elif f.attr in BUILDERS and _root_name(f.value) in modules:
                yield node.lineno, f"{ast.unparse(f)}()"


def scan() -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if _is_store(rel) or rel in INFRASTRUCTURE:
            continue
        found = list(violations(path.read_text(encoding="utf-8")))
        if found:
            out[rel] = found
    return out


def main(argv: list[str]) -> int:
    found = scan()
    for rel, hits in sorted(found.items()):
        for line, what in sorted(hits):
            print(f"src/chatmem/{rel}:{line}: {what} outside a store", file=sys.stderr)
    if found:
        print(
            "move the statement into the domain's store.py (docs/architecture.md, Where SQL lives)",
            file=sys.stderr,
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

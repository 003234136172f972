"""Hot statements: a turn's and an append's few statements run on the driver, not through
SQLAlchemy's execution machinery.

Why it exists (issue 18): ``await conn.execute(stmt, params)`` costs ~0.12 ms of CPU above the
driver call itself — a greenlet spawned and switched to, the statement's compiled form looked up,
an execution context, parameter processing, a cursor result and its metadata, event dispatch —
for every statement, and a demo turn runs a dozen. ``execute`` here runs a statement the stores
already build once (module level or ``functools.cache``) with the same SQL, the same parameter
values and the same driver as SQLAlchemy would, minus that machinery:

- compiled once per (statement, dialect, parameter names) with the dialect's own compiler; per
  call only ``construct_params`` and the bind processors (JSON serialising, …) run;
- run by the driver adapter's own async code on the connection the caller's transaction holds
  (``sqlite_driver.OneTripCursor.trip``: on the event loop's thread when it is short — at most
  ``INLINE_ROWS`` rows — and cannot wait on a lock, else one trip to aiosqlite's thread;
  asyncpg's adapter: its prepared-statement cache, in the transaction ``engine._first_trip``
  began) — so the
  transaction, its locks and its commit are SQLAlchemy's as before; no greenlet;
- rows come back as a ``Result`` (``.one()``, ``.first()``, ``.all()``, ``.scalar()``, attribute
  access by column key) with the result processors SQLAlchemy would apply (JSON parsing on
  SQLite), plus ``rowcount``;
- a driver error goes through SQLAlchemy's own handler (``Connection._handle_dbapi_exception``):
  the same wrapped exception (``IntegrityError``, ``OperationalError``…), the same disconnect
  detection and invalidation, the ``handle_error`` hooks;
- the engine's ``before_cursor_execute`` / ``after_cursor_execute`` listeners (tracing's spans,
  the bench's statement counter) are still called, with a stand-in context object (listeners set
  on one connection are not: chatmem sets none).

Anything the shortcut does not cover falls back to ``conn.execute`` unchanged: a connection with
no transaction begun yet (SQLAlchemy's autobegin), an invalidated one, a statement whose INSERT
needs Python-side column defaults, rows with RETURNING beyond one page of SQLAlchemy's
"insertmanyvalues" (a page is sent as one multi-row INSERT built by SQLAlchemy's own batcher; a
list of one row runs as that row), an uncacheable statement.
tests/test_db_hot.py compares every store's hot statement's rows and writes both ways.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy.engine import Result
from sqlalchemy.engine.result import IteratorResult, SimpleResultMetaData
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import Executable
from sqlalchemy.util.concurrency import greenlet_spawn


class HotResult(IteratorResult):
    """A buffered result plus the statement's ``rowcount``."""

    #: the driver's row count, or PostgreSQL's status message ("UPDATE 1") it is read from
    _status: int | str | None = -1

    @property
    def rowcount(self) -> int:
        status = self._status
        if isinstance(status, int):
            return status
        found = _ROWCOUNT.match(status or "")
        return int(found.group(1)) if found else -1


#: asyncpg's adapter's reading of a status message (``AsyncAdapt_asyncpg_cursor``)
_ROWCOUNT = re.compile(r"(?:SELECT|UPDATE|DELETE|INSERT \d+) (\d+)")


class _Plan:
    """One statement compiled for one dialect and one set of parameter names."""

    __slots__ = (
        "compiled",
        "expanding",
        "expanding_names",
        "expansions",
        "many_rows",
        "meta",
        "positions",
        "processors",
        "sql",
    )

    def __init__(self, compiled: Any, many: bool) -> None:
        self.compiled = compiled
        #: several rows with RETURNING: one multi-row INSERT (SQLAlchemy's "insertmanyvalues")
        self.many_rows = many and bool(compiled.effective_returning)
        self.sql: str = compiled.string
        self.positions: Sequence[str] = compiled.positiontup or ()
        self.processors = {k: p for k, p in compiled._bind_processors.items() if p is not None}
        self.expanding = bool(compiled.literal_execute_params or compiled.post_compile_params)
        #: the expanding IN parameters (None: one is a tuple IN, expanded anew every time) and
        #: their expansion by list lengths: (sql, positions, processors, expanded names)
        self.expanding_names: list[str] | None = [
            compiled.escaped_bind_names.get(n, n)
            for n in (compiled.bind_names[b] for b in compiled.post_compile_params)
        ]
        if any(b.type._is_tuple_type for b in compiled.post_compile_params):
            self.expanding_names = None
        self.expansions: dict[tuple, tuple] = {}
        self.meta: SimpleResultMetaData | None = None  # from the first result's description


#: SQLite: a hot statement of at most this many rows runs on the event loop's thread when it
#: cannot wait (``sqlite_driver.OneTripConnection.inline``): point work, a turn's two messages or
#: a flush's few events; more (an import's page of rows) takes aiosqlite's thread
INLINE_ROWS = 16

#: (statement cache key, dialect, parameter names, many) → plan; None: not for the shortcut
_PLANS: dict[tuple, _Plan | None] = {}
_MAX_PLANS = 500


def _plan(stmt: Any, dialect: Any, key: tuple, ck: Any, names, many: bool):
    plan = _PLANS.get(key, False)
    if plan is not False:
        return plan
    compiled: Any = stmt.compile(
        dialect=dialect, cache_key=ck, column_keys=sorted(names), for_executemany=many
    )
    ok = (
        compiled.positional
        and not compiled.insert_prefetch
        and not compiled.update_prefetch
        and not (many and compiled.post_compile_params)
        and not (many and compiled.effective_returning and compiled._insertmanyvalues is None)
        and not compiled.literal_execute_params
        and not compiled.schema_translate_map
    )
    plan = _Plan(compiled, many) if ok else None
    if len(_PLANS) < _MAX_PLANS:
        _PLANS[key] = plan
    return plan


def _metadata(plan: _Plan, description: Sequence, dialect: Any) -> SimpleResultMetaData:
    """Row keys and result processors, as SQLAlchemy's cursor result would give them: the
    compiled result columns in order when they match the cursor's; by name for a textual
    statement that types only some of its columns."""
    cols = plan.compiled._result_columns
    if len(cols) == len(description) and plan.compiled._ordered_columns:
        keys = [rc.keyname for rc in cols]
        kinds = [rc.type for rc in cols]
    else:
        typed = {rc.keyname: rc.type for rc in cols}
        keys = [d[0] for d in description]
        kinds = [typed.get(k) for k in keys]
    procs = [
        kind._cached_result_processor(dialect, d[1]) if kind is not None else None
        for kind, d in zip(kinds, description, strict=True)
    ]
    return SimpleResultMetaData(keys, _processors=procs if any(procs) else None)


def _bound(plan: _Plan, params: Mapping | None, extracted: Any, seq_format: Any):
    """(sql, positional parameters) of one execution."""
    values = plan.compiled.construct_params(params, extracted_parameters=extracted)
    sql, positions, procs = plan.sql, plan.positions, plan.processors
    if plan.expanding:
        sql, positions, procs, values = _expand(plan, values)
    return sql, seq_format([procs[k](values[k]) if k in procs else values[k] for k in positions])


def _expand(plan: _Plan, values: dict) -> tuple:
    """An expanding IN's statement for these list lengths, SQLAlchemy's rendering
    (``_process_parameters_for_postcompile``) kept per lengths: (sql, positions, processors,
    values with the expanded names)."""
    names = plan.expanding_names
    try:
        key = tuple(len(values[n]) for n in names) if names is not None else None
    except TypeError:  # not a list: SQLAlchemy's rendering says what it makes of it
        key = None
    hit = plan.expansions.get(key) if key is not None else None
    if hit is not None:
        values = dict(values)
        for name, expanded in hit[3].items():
            values.update(zip(expanded, values[name], strict=True))
        return hit[0], hit[1], hit[2], values
    state = plan.compiled._process_parameters_for_postcompile(values)
    procs = {**plan.processors, **{k: p for k, p in state.processors.items() if p is not None}}
    hit = (state.statement, state.positiontup, procs, state.parameter_expansion)
    if key is not None and len(plan.expansions) < 64:
        plan.expansions[key] = hit
    return hit[0], hit[1], hit[2], {**values, **state.parameters}


async def execute(
    c: AsyncConnection,
    stmt: Executable,
    params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
) -> Result:
    """``c.execute(stmt, params)``, run on the driver when the shortcut covers it."""
    sync: Any = c.sync_connection
    rows: Any = params
    if isinstance(rows, list) and len(rows) == 1:  # one row: what SQLAlchemy would send too
        rows = rows[0]
    many = isinstance(rows, list)
    names = rows[0].keys() if many and rows else (rows or {}).keys()
    fairy: Any = sync._dbapi_connection if sync is not None else None
    ck = cast(Any, stmt)._generate_cache_key() if fairy is not None else None
    if ck is None or (many and not rows) or not sync.in_transaction() or sync.invalidated:
        return await c.execute(stmt, params)
    dialect = sync.dialect
    plan = _plan(stmt, dialect, (ck.key, dialect.name, frozenset(names), many), ck, names, many)
    if plan is None:
        return await c.execute(stmt, params)
    fmt = dialect.execute_sequence_format
    if plan.many_rows:
        batch = _one_batch(plan, rows, ck.bindparams, fmt, dialect)
        if batch is None:
            return await c.execute(stmt, params)
        sql, args, many = batch.replaced_statement, batch.replaced_parameters, False
    elif many:
        bound = [_bound(plan, p, ck.bindparams, fmt) for p in rows]
        sql, args = bound[0][0], [b[1] for b in bound]
    else:
        sql, args = _bound(plan, rows, ck.bindparams, fmt)
    short = not isinstance(rows, list) or len(rows) <= INLINE_ROWS
    return await _run(sync, fairy.dbapi_connection, plan, sql, args, many, short)


def _one_batch(plan: _Plan, rows: list, extracted: Any, seq_format: Any, dialect: Any):
    """Several rows with RETURNING as SQLAlchemy sends them: its own batching into one
    multi-row INSERT (``_deliver_insertmanyvalues_batches``, what ``Connection`` calls); None
    when it takes more than one statement (more rows than a page: left to SQLAlchemy)."""
    compiled, procs = plan.compiled, plan.processors
    values = [compiled.construct_params(p, extracted_parameters=extracted) for p in rows]
    args = [
        seq_format([procs[k](v[k]) if k in procs else v[k] for k in plan.positions]) for v in values
    ]
    page = dialect.insertmanyvalues_page_size
    batches = list(
        compiled._deliver_insertmanyvalues_batches(plan.sql, args, values, None, page, False, None)
    )
    return batches[0] if len(batches) == 1 else None


async def _run(
    sync: Any, adapt: Any, plan: _Plan, sql: str, args: Any, many: bool, short: bool
) -> Result:
    dispatch = sync.engine.dispatch  # (a connection's own joins it anew per connection)
    listened = bool(dispatch.before_cursor_execute)
    one_pg = not many and sync.dialect.name == "postgresql"  # asyncpg, without the cursor
    cursor: Any = adapt.cursor() if listened or not one_pg else None
    context = types.SimpleNamespace(executemany=many) if listened else None
    if context is not None:
        for fn in dispatch.before_cursor_execute:
            fn(sync, cursor, sql, args, context, many)
    try:
        if one_pg:
            description, rows, status = await _pg_fetch(adapt, sql, args, plan.meta is None)
        elif sync.dialect.name == "postgresql":
            await cursor._executemany(sql, args)
        else:  # SQLite: on the loop's thread when it cannot wait (sqlite_driver.py)
            await cursor.trip(sql, args, many, short)
    except Exception as error:
        await greenlet_spawn(_raise, sync, adapt, error, sql, args)
    if context is not None:
        for fn in dispatch.after_cursor_execute:
            fn(sync, cursor, sql, args, context, many)
    if not one_pg:
        description, rows, status = cursor.description, list(cursor._rows), cursor.rowcount
    if description and plan.meta is None:
        plan.meta = _metadata(plan, description, sync.dialect)
    meta = plan.meta if description and plan.meta is not None else _NO_ROWS
    result = HotResult(meta, iter(rows if description else ()))
    result._status = status
    return result


async def _pg_fetch(adapt: Any, sql: str, args: Any, describe: bool) -> tuple:
    """One statement on asyncpg as the adapter's cursor runs it (``_prepare_and_execute``: the
    same mutex, lazy BEGIN, per-connection prepared-statement cache and ``fetch``), minus the
    cursor: (description, rows, status message). The description is built only for a plan's
    first result (``True`` after that when the statement returns rows); the row count is read
    from the status only when asked (``HotResult.rowcount``)."""
    async with adapt._execute_mutex:
        if adapt._transaction is None:
            await adapt._start_transaction()
        prepared, attributes = await adapt._prepare(sql, 0)
        rows = await prepared.fetch(*args)
        status = prepared.get_statusmsg()
    if not attributes:
        return None, rows, status
    if not describe:
        return True, rows, status
    return [(a.name, a.type.oid, None, None, None, None, None) for a in attributes], rows, status


_NO_ROWS = SimpleResultMetaData([])


def _raise(sync: Any, adapt: Any, error: Exception, sql: str, args: Any) -> None:
    """SQLAlchemy's handling of a driver error (in a greenlet: invalidating may close the
    connection): the adapter's translation, then the connection's wrapping."""
    try:
        adapt._handle_exception(error)
    except Exception as translated:
        sync._handle_dbapi_exception(translated, sql, args, None, None)
    raise error  # pragma: no cover - _handle_exception always raises

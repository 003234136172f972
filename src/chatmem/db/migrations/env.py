"""Alembic environment: runs migrations over the async engine on either dialect."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import event
from sqlalchemy.ext.asyncio import create_async_engine

from chatmem.db.fulltext import register_sqlite_functions
from chatmem.db.migrate import MIGRATION_LOCK
from chatmem.db.schema import metadata

config = context.config


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _main() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "alembic: sqlalchemy.url is not set"
    engine = create_async_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(
            engine.sync_engine, "connect", lambda conn, _rec: register_sqlite_functions(conn)
        )
    try:
        async with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            else:  # one migrating process at a time (replicas start together): migrate.py
                await conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            await conn.run_sync(_run)
            await conn.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():  # pragma: no cover - we always migrate online
    raise SystemExit("offline migrations are not supported")
asyncio.run(_main())

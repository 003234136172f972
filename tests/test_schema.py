"""The migrations and the schema module agree on both dialects, and migrations go down and up."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.exc import SAWarning
from sqlalchemy.ext.asyncio import create_async_engine

from chatmem.db import schema
from chatmem.db.engine import normalize_url
from chatmem.db.migrate import downgrade, upgrade

#: The full-text machinery of migrations 0002/0008 (FTS5 tables and their shadow tables, the
#: PostgreSQL tsvector column and GIN indexes) is dialect-specific and lives in the migrations only.
FTS_NAMES = ("memories_fts", "messages_fts")
FTS_COLUMNS = ("search_tsv",)
FTS_INDEXES = ("idx_memories_fts", "idx_messages_fts")
#: PostgreSQL-only indexes created by migrations and not declared in the schema module: a user's
#: messages newest first, for search's recency walk (migration 0019; SQLite's FTS5 needs none).
PG_ONLY_INDEXES = ("idx_messages_user_recent",)

#: Indexes over expressions (lower(trim(name)), DESC keys): Alembic cannot compare them reliably
#: on either dialect, so they are checked by name and uniqueness in test_every_index_exists.
EXPRESSION_INDEXES = {
    ix.name
    for tbl in schema.metadata.tables.values()
    for ix in tbl.indexes
    if any(not hasattr(e, "name") or e.__class__.__name__ != "Column" for e in ix.expressions)
}


def _include(obj, name, type_, reflected, compare_to):
    if type_ == "table" and name and name.startswith(FTS_NAMES):
        return False
    if type_ == "index" and (
        name in FTS_INDEXES or name in EXPRESSION_INDEXES or name in PG_ONLY_INDEXES
    ):
        return False
    return not (type_ == "column" and name in FTS_COLUMNS)


async def _index_names(url: str) -> dict[str, bool]:
    engine = create_async_engine(normalize_url(url))
    try:
        async with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                rows = (
                    await conn.exec_driver_sql(
                        "SELECT name, sql FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
                    )
                ).all()
                return {r[0]: r[1].upper().startswith("CREATE UNIQUE") for r in rows}
            rows = (
                await conn.exec_driver_sql(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname='public'"
                )
            ).all()
            return {r[0]: r[1].upper().startswith("CREATE UNIQUE") for r in rows}
    finally:
        await engine.dispose()


async def _diff(url: str) -> list:
    engine = create_async_engine(normalize_url(url))
    try:
        async with engine.connect() as conn:

            def run(sync_conn):
                ctx = MigrationContext.configure(
                    sync_conn, opts={"compare_type": True, "include_object": _include}
                )
                return compare_metadata(ctx, schema.metadata)

            return await conn.run_sync(run)
    finally:
        await engine.dispose()


async def _tables(url: str) -> set[str]:
    engine = create_async_engine(normalize_url(url))
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda s: inspect(s).get_table_names()))
    finally:
        await engine.dispose()


def _expected_tables() -> set[str]:
    return set(schema.metadata.tables)


@pytest.mark.filterwarnings("ignore:autogenerate skipping")
def test_migrated_database_matches_schema_module(db_url):
    diff = asyncio.run(_diff(db_url))
    assert diff == [], diff


def test_every_index_exists(db_url):
    found = asyncio.run(_index_names(db_url))
    for tbl in schema.metadata.tables.values():
        for ix in tbl.indexes:
            assert ix.name in found, ix.name
            assert found[ix.name] == bool(ix.unique), ix.name
    assert {"idx_projects_user_name_unique", "idx_conv_user_updated"} <= EXPRESSION_INDEXES
    pg_only = set(PG_ONLY_INDEXES) & set(found)
    assert pg_only == (set(PG_ONLY_INDEXES) if db_url.startswith("postgresql") else set())


async def _gin_options(url: str) -> dict[str, list[str]]:
    engine = create_async_engine(normalize_url(url))
    try:
        async with engine.connect() as conn:
            rows = await conn.exec_driver_sql(
                "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname = ANY($1)",
                (list(FTS_INDEXES),),
            )
            return {r[0]: list(r[1] or []) for r in rows.all()}
    finally:
        await engine.dispose()


def test_full_text_gin_indexes_have_no_pending_list(db_url):
    """Migration 0015: recall reads rows written seconds ago, so GIN's pending list (scanned
    linearly by every query until VACUUM) is off on PostgreSQL."""
    if db_url.startswith("postgresql"):
        opts = asyncio.run(_gin_options(db_url))
        assert opts == {name: ["fastupdate=off"] for name in FTS_INDEXES}, opts
    else:  # FTS5 has no pending list: the migration leaves SQLite's index tables as they were
        assert {"messages_fts", "memories_fts"} <= asyncio.run(_tables(db_url))


def test_downgrade_and_reupgrade(db_url):
    upgrade(db_url)
    downgrade(db_url, "base")
    remaining = asyncio.run(_tables(db_url)) - {"alembic_version"}
    assert remaining == set(), remaining
    upgrade(db_url)
    assert _expected_tables() <= asyncio.run(_tables(db_url))
    assert asyncio.run(_diff(db_url)) == []


def test_a_migration_from_empty_warns_nothing(db_url):
    """``chatmem migrate`` on a fresh database prints only its one line: no SQLAlchemy warning
    (SQLite's reflection in a batch operation warned that it skipped an expression index)."""
    downgrade(db_url, "base")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        upgrade(db_url)
    assert [str(w.message) for w in seen if issubclass(w.category, SAWarning)] == []


SEED_COLUMN_COUNTS = {
    # seed 001 tables: at least the seeded number of columns, every seeded name present
    "projects": 14,
    "conversations": 22,
    "messages": 30,
    "message_feedback": 12,
    "user_feedback": 15,
    "conversation_shares": 6,
    "memories": 17,
    "conversation_compaction_leases": 3,
    "conversation_generation_leases": 5,
}

SEED_001_COLUMNS = {
    "messages": "id conversation_id parent_id role provider model_id model_label fast blocks raw "
    "stop_reason attachments selected_user_skill_ids citations input_tokens "
    "context_tokens output_tokens cache_read_tokens cache_write_tokens cost currency "
    "credits status error gen_ms search_text verify created_at feedback author_id",
    "conversations": "id user_id project_id title provider model_id fast kb_ids rag_mode "
    "summary_blocks active_leaf_id provider_state pinned archived starred "
    "inline_source_conv inline_parent_id inline_quote is_public created_at "
    "updated_at workspace_id",
    "memories": "id user_id memory_text memory_type slot value status confidence "
    "source_message_ids supersedes superseded_by affected_domains reason valid_from "
    "valid_until created_at updated_at",
}

SEED_000_COLUMNS = {
    "conversations": "agent_id summary message_count last_message_at",
    "messages": "user_id agent_id metadata",
    "memories": "agent_id importance",
}


def test_seed_columns_present():
    for table, n in SEED_COLUMN_COUNTS.items():
        assert len(schema.metadata.tables[table].c) >= n, table
    for spec in (SEED_001_COLUMNS, SEED_000_COLUMNS):
        for table, cols in spec.items():
            missing = set(cols.split()) - set(schema.metadata.tables[table].c.keys())
            assert not missing, (table, missing)
    assert len(SEED_001_COLUMNS["messages"].split()) == 30
    assert len(SEED_001_COLUMNS["conversations"].split()) == 22
    assert len(SEED_001_COLUMNS["memories"].split()) == 17

"""Portable column types: JSON is TEXT on SQLite and JSONB on PostgreSQL through one type."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Integer, LargeBinary
from sqlalchemy.dialects import postgresql, sqlite

#: JSON documents: TEXT on SQLite (SQLAlchemy serialises), JSONB on PostgreSQL.
JSONDoc = JSON().with_variant(postgresql.JSONB(), "postgresql")

#: Millisecond timestamps and counters that may outgrow 32 bits: INTEGER on SQLite, BIGINT on PG.
#: (On SQLite an INTEGER PRIMARY KEY is special; we never use this type for one.)
Millis = BigInteger().with_variant(sqlite.INTEGER(), "sqlite")

#: 0/1 flags, stored as INTEGER exactly as the seeds define them.
Flag = Integer

#: Binary payloads (screenshots): BLOB on SQLite, BYTEA on PostgreSQL.
Bytes = LargeBinary

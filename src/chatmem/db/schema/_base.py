"""The one ``MetaData`` every table module defines its tables on, its naming convention for
constraints and indexes, and the column shorthands of the seeds' conventions (flags are INTEGER
0/1, times integer milliseconds, JSON TEXT on SQLite and JSONB on PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    Text,
    text,
)

from ..types import Flag, JSONDoc, Millis

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


def _txt(name: str, default: str | None = "", **kw) -> Column:
    if default is None:
        return Column(name, Text, nullable=True, **kw)
    return Column(name, Text, nullable=False, server_default=text(f"'{default}'"), **kw)


def _flag(name: str, default: int = 0) -> Column:
    return Column(name, Flag, nullable=False, server_default=text(str(default)))


def _int(name: str, default: int = 0) -> Column:
    return Column(name, Integer, nullable=False, server_default=text(str(default)))


def _big(name: str, default: int = 0) -> Column:
    return Column(name, Millis, nullable=False, server_default=text(str(default)))


def _real(name: str, default: float = 0) -> Column:
    return Column(name, Float(precision=53), nullable=False, server_default=text(str(default)))


def _json(name: str, default: str = "[]") -> Column:
    return Column(name, JSONDoc, nullable=False, server_default=text(f"'{default}'"))


def _ms(name: str, nullable: bool = False) -> Column:
    return Column(name, Millis, nullable=nullable)


def _fk(name: str, target: str, ondelete: str, nullable: bool = False) -> Column:
    return Column(name, Text, ForeignKey(target, ondelete=ondelete), nullable=nullable)

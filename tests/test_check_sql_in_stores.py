"""The SQL-in-stores gate (tools/check_sql_in_stores.py): what it flags, what it lets through, and
that the repository passes it today."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "check_sql_in_stores", ROOT / "tools" / "check_sql_in_stores.py"
)
assert _spec and _spec.loader
gate = importlib.util.module_from_spec(_spec)
sys.modules["check_sql_in_stores"] = gate
_spec.loader.exec_module(gate)


def found(src: str) -> list[str]:
    return [what for _, what in gate.violations(src)]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("from sqlalchemy import select\nselect(t.users)\n", ["select()"]),
        ("from sqlalchemy import update as up\nup(t.users)\n", ["up()"]),
        ("from sqlalchemy import text\ntext('SELECT 1')\n", ["text()"]),
        ("import sqlalchemy as sa\nsa.delete(t.users)\n", ["sa.delete()"]),
        (
            "from sqlalchemy.dialects import postgresql\npostgresql.insert(t.x)\n",
            ["postgresql.insert()"],
        ),
        (
            "from sqlalchemy.dialects.sqlite import insert as si\nsi(t.x)\n",
            ["si()"],
        ),
        ("async def f(c, q):\n    await c.execute(q)\n", [".execute()"]),
        ("async def f(c):\n    await c.exec_driver_sql('VACUUM')\n", [".exec_driver_sql()"]),
    ],
)
def test_flags_statements_and_execution(src, expected):
    assert found(src) == expected


@pytest.mark.parametrize(
    "src",
    [
        "d = {}\nd.update(a=1)\n",  # not SQLAlchemy's update
        "def select(x):\n    return x\nselect(1)\n",  # a local function of that name
        "s = set()\ns.discard(1)\nitems = []\nitems.insert(0, 1)\n",
        "from sqlalchemy import and_, or_\nand_(a, or_(b, c))\n",  # expressions are not statements
        "from . import store\nasync def f(c):\n    return await store.get(c, 1)\n",
    ],
)
def test_lets_other_calls_through(src):
    assert found(src) == []


def test_stores_and_infrastructure_are_allowed():
    assert gate._is_store("memory/store.py")
    assert gate._is_store("conversations/tree_store.py")  # a store split along a seam
    assert not gate._is_store("conversations/restore.py")
    assert gate._is_store("db/migrations/versions/0001_initial.py")
    assert not gate._is_store("memory/service.py")
    for rel in gate.INFRASTRUCTURE:
        assert (gate.SRC / rel).is_file(), f"{rel} is allow-listed but does not exist"


def test_the_repository_passes(capsys):
    assert gate.main([]) == 0, capsys.readouterr().err

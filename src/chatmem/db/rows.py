"""A row built in Python that reads like a SQLAlchemy ``Row``: by attribute and by ``_mapping``.

Why it exists: a statement's row is sometimes known without reading it back — a turn's start
and end return what they wrote (generation/start_store, generation/finalize), a pending fork's
page is its source's rows mapped as the copy will store them (conversations/forks) — and the
code that shows rows (``conversations/wire.message_out``, ``conversation_out``) reads
``_mapping``, the rest attributes.
"""

from __future__ import annotations


class Columns:
    """A row's columns by attribute and ``_mapping``."""

    def __init__(self, mapping: dict) -> None:
        self._mapping = mapping
        self.__dict__.update(mapping)

"""Search over the caller's own conversations: titles and message text (seed 001 (docs/specs.md) semantics).

Plain ``LIKE`` over the stored ``search_text`` projection keeps one code path for SQLite and
PostgreSQL and needs no index build; archived conversations, inline threads and workspace rows
are left out, as in the seed.
"""

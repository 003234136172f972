"""The tables of migration 0001 (``versions/0001_initial_schema.py``), created in three steps
by area so that no file holds the whole schema: accounts, conversations, memory and feedback.
Frozen like any applied migration: later changes are new revisions, never edits here."""

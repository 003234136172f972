"""Storage: one schema for SQLite and PostgreSQL, the engine factory and migrations."""

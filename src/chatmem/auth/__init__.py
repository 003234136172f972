"""Users, API keys, web sessions and the caller's identity (the Principal every query is scoped to)."""

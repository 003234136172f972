"""What an operator runs and asks: readiness, the metrics endpoint and admin listener, backups,
the effective configuration and its validation.

Why it exists: these are the self-hoster's tools (README "Operations"); they read across domains
(the job queue, the migrations, the connection pool) without being part of any of them.
"""

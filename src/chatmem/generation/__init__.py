"""Generation: turns, the durable event log, leases, the sweeper and the SSE routes (docs/architecture.md §3).

The public Python API for other features (e.g. the seed-000 (docs/specs.md) compat layer) is in ``service``.
"""

"""Generation: turns, the durable event log, leases, the sweeper and the SSE routes (DESIGN §5).

The public Python API for other features (e.g. the seed-000 compat layer) is in ``service``.
"""

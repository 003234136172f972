"""The seed-000 (docs/specs.md) compatible "inbox" API under ``/rpc``: companion agents, their default conversation,
history paging, chat turns, agent memories and message feedback, in that system's envelope.

A client written for seed 000 works unchanged; underneath, the turns, memories and feedback are
chatmem's own (durable generation, audited memory, one feedback table).
"""

"""Public read-only shares of a conversation (seed 001 (docs/specs.md) ``conversation_shares``).

A share is a frozen, redacted snapshot of the conversation's active path taken at share time; its
row id is the 192-bit public token. Re-sharing replaces the row (new token, old link dead) and
revoking deletes it, so nothing written later in the private conversation can ever leak.
"""

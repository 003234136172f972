"""Inline threads: side conversations anchored to a quoted span of a message."""

"""Companion agents (seed 000's (docs/specs.md) user_agent_companions): personas a user owns and chats with."""

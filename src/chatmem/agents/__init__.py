"""Companion agents (seed 000's user_agent_companions): personas a user owns and chats with."""

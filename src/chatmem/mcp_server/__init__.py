"""The MCP door: a user's memories and conversation search as Model Context Protocol tools."""

"""Projects: containers for conversations, with instructions injected into their context."""

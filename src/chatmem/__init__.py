"""chatmem: a self-hostable chat backend for LLM products."""

__version__ = "0.1.0"

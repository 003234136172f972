"""Long-term memory: extraction (rules or LLM), the slot policy, retrieval within a token budget,
and the user's control over every memory (docs/architecture.md, docs/specs.md)."""

"""Context assembly inside a token budget, and compaction into rolling summary blocks."""

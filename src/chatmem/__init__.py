"""chatmem: a self-hostable chat backend for LLM products.

Reading the code: docs/architecture.md is the map (layers, a turn's flow, state, extension points),
docs/data-model.md the tables; "seed 000" and "seed 001" in comments are the two specifications
summarised in docs/specs.md.
"""

__version__ = "0.1.0"

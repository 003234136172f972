"""The embedder interface every vector backend implements.

An embedder turns a batch of texts into one vector each. It knows nothing about messages, memories
or the database; the embedding job and the query path do the rest. Third-party embedders register
a class under the ``chatmem.embedders`` entry-point group, exactly like the built-in ``openai``,
``local`` and ``hashing`` ones; the class is constructed with the process Settings and must not do
slow work (loading a model, opening connections) in ``__init__``: the first ``embed`` call does it.
"""

from __future__ import annotations

from typing import Protocol


class EmbedderError(Exception):
    """An embedder failure. ``permanent`` means retrying cannot help (bad key, unknown model, a
    server that answers vectors of the wrong size): the job fails at once instead of backing off."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


class Embedder(Protocol):
    name: str  # the registry name ("openai", "local", …)
    model: str  # the model it runs (part of the key vectors are stored under)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order, all of the same length. Must not block the event loop
        (run CPU work in a thread)."""
        ...

    async def aclose(self) -> None: ...

    # Optional: ``async def warm(self) -> None`` — slow set-up (loading a model), run in the
    # background when the runtime starts.

"""Embedder plugins: discovered through the ``chatmem.embedders`` entry-point group, chosen by
``CHATMEM_EMBEDDER`` and checked when the process starts.

The built-ins (``openai``, ``local``, ``hashing``) register exactly like third-party ones. A class
may define ``check(settings)`` (a static method raising ``ValueError``) to refuse a configuration
at start — a missing key, a missing optional dependency — instead of failing in the first job.

Vectors are stored under a **model key**, ``<embedder>:<model>`` plus ``@<dimensions>`` when the
dimensions were set explicitly, so vectors of different models or sizes never meet in one search
and switching models simply starts a new set (the old one stays until its rows are deleted).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from .base import Embedder

GROUP = "chatmem.embedders"


def available() -> dict:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def model_key(settings, embedder: Embedder) -> str:
    key = f"{embedder.name}:{embedder.model}"
    dims = int(getattr(settings, "embedding_dimensions", 0) or 0)
    return f"{key}@{dims}" if dims else key


def load(settings) -> Embedder | None:
    """The configured embedder (constructed, not yet used), or None when embeddings are off.

    Raises ``ValueError`` with a clear message for an unknown name or a configuration the
    embedder refuses, so ``create_app`` fails at start rather than on the first job.
    """
    name = (getattr(settings, "embedder", "") or "").strip()
    if not name or name.lower() in ("off", "none"):
        return None
    found = available()
    ep = found.get(name)
    if ep is None:
        raise ValueError(
            f"CHATMEM_EMBEDDER={name!r}: no such embedder is installed "
            f"(installed: {', '.join(sorted(found)) or 'none'})"
        )
    cls = ep.load()
    check = getattr(cls, "check", None)
    if check is not None:
        check(settings)
    return cls(settings)

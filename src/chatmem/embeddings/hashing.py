"""The ``hashing`` embedder: deterministic, offline vectors from hashed words and CJK bigrams.

Why it exists: tests and offline demos need an embedder that runs the real registry, job, storage
and search paths without a model or a network, and gives the same vector for the same text on
every machine. It is lexical (a bag of hashed word and character-bigram features with a signed
hash, normalised), not semantic — texts that share words score high, paraphrases do not. Use
``openai`` or ``local`` for real semantic recall.
"""

from __future__ import annotations

import hashlib
import math
import re
from itertools import pairwise

DEFAULT_DIMENSIONS = 256
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def features(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower()):
        if _CJK.search(w):
            out += [a + b for a, b in pairwise(w)] or [w]
        elif len(w) > 1:
            out.append(w)
    return out


def hashed_vector(text: str, dims: int) -> list[float]:
    vec = [0.0] * dims
    for f in features(text):
        h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
        vec[h % dims] += 1.0 if (h >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        vec[0] = 1.0  # a text without features still gets a (uninformative) unit vector
        return vec
    return [x / norm for x in vec]


class HashingEmbedder:
    name = "hashing"

    def __init__(self, settings=None) -> None:
        self.dimensions = int(getattr(settings, "embedding_dimensions", 0) or DEFAULT_DIMENSIONS)
        self.model = getattr(settings, "embedding_model", "") or f"bow-{self.dimensions}"
        self.calls = 0  # batches embedded (tests read it)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [hashed_vector(t, self.dimensions) for t in texts]

    async def aclose(self) -> None:
        return None

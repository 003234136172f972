"""Fake model providers for tests: an upstream that fails (before or after some text) and one that
holds a turn 'in flight' until the test opens a gate."""

from __future__ import annotations

import asyncio

from chatmem.providers.base import Finish, ProviderError, TextDelta, Usage


class FailingProvider:
    """Streams ``parts``, then fails like an upstream outage (no parts: fails at once)."""

    def __init__(
        self,
        name: str = "failing",
        parts: tuple[str, ...] = ("partial", " answer"),
        message: str = "upstream exploded",
    ) -> None:
        self.name, self.parts, self.message = name, parts, message

    async def stream(self, model, messages, *, max_tokens):
        for p in self.parts:
            yield TextDelta(p)
        raise ProviderError(self.message, "upstream_error")


class GatedProvider:
    """Streams one word, then waits for ``gate`` before finishing: a turn that is 'in flight'."""

    name = "gated"

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def stream(self, model, messages, *, max_tokens):
        yield TextDelta("first")
        await self.gate.wait()
        yield TextDelta(" second")
        yield Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4, cache_write_tokens=1)
        yield Finish("end_turn")

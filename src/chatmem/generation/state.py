"""What one process holds for generation: the provider registry and the turns it is running.

Registered on ``rt.extras["generation"]`` and as a service, so that shutting the process down ends
its running turns as ``error`` / ``generation_interrupted`` (their text kept) instead of leaving them
for another replica's sweeper, and closes provider clients.
"""

from __future__ import annotations

import asyncio

from ..providers.registry import Registry
from .events import LiveLog
from .flusher import Flusher


class GenerationState:
    def __init__(self, rt) -> None:
        self.rt = rt
        self.registry = Registry(rt.settings)
        self.runners: dict[str, object] = {}  # assistant message id → TurnRunner
        self.live: dict[str, LiveLog] = {}
        self.flusher = Flusher(rt, self)

    def track(self, runner) -> None:
        mid = runner.spec.assistant_message_id
        self.runners[mid] = runner
        self.live[mid] = runner.live
        runner.task = asyncio.create_task(runner.run(), name=f"turn:{mid}")

    def forget(self, runner) -> None:
        mid = runner.spec.assistant_message_id
        self.runners.pop(mid, None)
        self.live.pop(mid, None)

    async def start(self) -> None:
        await self.flusher.start()

    async def stop(self) -> None:
        runners = list(self.runners.values())
        for r in runners:
            r.request_stop("shutdown")
        tasks = [r.task for r in runners if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        await self.flusher.stop()
        await self.registry.aclose()


def get_state(rt) -> GenerationState:
    g = rt.extras.get("generation")
    if g is None:
        g = rt.extras["generation"] = GenerationState(rt)
    return g

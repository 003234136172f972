"""The turns one process is running: their runners and live event logs (``Runtime.generation``).

Why it exists: followers on the same process read a running turn's events from memory, and
shutting the process down ends its running turns as ``error`` / ``generation_interrupted`` (their
text kept) instead of leaving them for another replica's sweeper. It is a service on the runtime
for that reason.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from ..config import Settings
from ..db.engine import Database
from .events import LiveLog
from .flusher import Flusher


class Runner(Protocol):
    """What the state needs of a ``turns.TurnRunner`` (a protocol: turns.py imports the runtime,
    which holds this state)."""

    spec: Any  # TurnSpec: .assistant_message_id
    live: LiveLog
    task: asyncio.Task | None

    async def run(self) -> None: ...

    def request_stop(self, cause: str) -> None: ...


class GenerationState:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.runners: dict[str, Runner] = {}  # assistant message id → TurnRunner
        self.live: dict[str, LiveLog] = {}
        #: writes every running turn's pending events (flusher.py); started and stopped with this
        self.flusher = Flusher(db, settings, self)

    def track(self, runner: Runner) -> None:
        mid = runner.spec.assistant_message_id
        self.runners[mid] = runner
        self.live[mid] = runner.live
        runner.task = asyncio.create_task(runner.run(), name=f"turn:{mid}")

    def forget(self, runner: Runner) -> None:
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
        await self.flusher.stop()  # after the turns ended: their final writes are their own

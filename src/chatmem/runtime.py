"""The Runtime: what one process holds (settings, database, background services), built per app.

Nothing here is created at import time; ``create_app(settings)`` builds one Runtime, and tests can
build several side by side. Background services (job worker, sweeper, …) are objects with async
``start()`` and ``stop()`` registered on the runtime and driven by the app's lifespan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .config import Settings
from .db.engine import Database


class Service(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass
class Runtime:
    settings: Settings
    db: Database
    services: list[Service] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # per-feature singletons (event hub, …)

    async def start(self) -> None:
        for s in self.services:
            await s.start()

    async def stop(self) -> None:
        for s in reversed(self.services):
            await s.stop()
        await self.db.dispose()

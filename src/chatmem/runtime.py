"""The Runtime: the typed object one process holds — settings, database, providers, running turns,
job handlers, the extension hooks and the background services.

Why it exists: every route and use-case reaches process state through one object whose attributes
have types, so a reader follows the wiring by following attribute types and imports (no
string-keyed lookups). Nothing here is created at import time; the composition root
(:func:`chatmem.app.create_runtime`) builds one Runtime per process and fills in the feature
wiring (job handlers, turn hooks, background services). Tests build several side by side.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.types import ASGIApp

from .auth.cache import PrincipalCache
from .auth.models import Principal
from .auth.throttle import LoginGuard
from .config import Settings
from .conversations import forks
from .conversations.paths import PathCache
from .db.engine import Database
from .db.singleton import new_holder_id
from .edge.ratelimit import Throttle
from .embeddings.service import EmbeddingService
from .generation.state import GenerationState
from .observability.telemetry import Telemetry
from .providers.registry import Registry
from .search.df_memo import CountMemo

#: how long a stopping process lets the fork copies it started finish (``conversations/forks``)
FORK_COPY_GRACE_S = 5.0

#: A job handler: ``await fn(runtime, payload)``; registered by kind in ``Runtime.job_handlers``.
JobHandler = Callable[["Runtime", dict], Awaitable[None]]


class Service(Protocol):
    """A background service driven by the app's lifespan (job worker, sweeper, …)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class BeforeTurn(Protocol):
    """Runs after the user message is written and before the turn's context is built (memory's
    "remember …"/"forget …" chat commands); returns a small report. Must not raise.
    ``user_text``: the message's visible text when the caller has it (a new turn does), so a hook
    may skip reading the message back for the common case, a message that is no command."""

    async def __call__(
        self,
        rt: Runtime,
        principal: Principal,
        conv_id: str,
        user_message_id: str,
        *,
        user_text: str | None = None,
    ) -> dict: ...


class MemorySource(Protocol):
    """What context assembly injects as the memories section, inside the turn's read transaction:
    ``{"lines": [...], "ids": [...], "header": ""}`` within ``budget_tokens``."""

    async def __call__(
        self,
        c: AsyncConnection,
        *,
        principal: Any,
        conv: Any,
        query: str,
        budget_tokens: int,
        count_tokens: Callable[[str], int],
    ) -> dict: ...


#: Picks the memory extractor for a conversation (an override of the ``memory_extractor`` setting;
#: returns an object with ``name`` and ``async extract(ExtractionInput)``).
ExtractorFactory = Callable[["Runtime", Any], Any]


@dataclass(eq=False)
class Runtime:
    settings: Settings
    db: Database
    #: provider plugins and the model catalogue: the one registry of the process
    providers: Registry
    #: the turns this process is running (their live event logs), ended on shutdown
    generation: GenerationState
    #: login and login-link limits (per IP and per account)
    login_guard: LoginGuard
    #: the public shared-conversation reader's per-IP limit
    share_limiter: Throttle
    #: job kind → handler, filled by the composition root; the worker claims only these kinds
    job_handlers: dict[str, JobHandler] = field(default_factory=dict)
    before_turn: BeforeTurn | None = None
    memory_source: MemorySource | None = None
    memory_extractor: ExtractorFactory | None = None
    #: the configured embedder's service; None = embeddings off (``CHATMEM_EMBEDDER`` unset)
    embeddings: EmbeddingService | None = None
    #: the MCP server's ASGI app, mounted at ``/mcp`` (built with its session manager)
    mcp_app: ASGIApp | None = None
    services: list[Service] = field(default_factory=list)
    #: metrics, the turn log line and tracing (observability/); domains report into its hooks
    telemetry: Telemetry = field(default_factory=Telemetry)
    #: recall's per-process memo of each conversation's latest path (conversations/paths.py)
    path_cache: PathCache = field(default_factory=PathCache)
    #: recall's per-process memo of common words' counts per conversation (search/df_memo.py)
    df_memo: CountMemo = field(default_factory=CountMemo)
    #: who a key or session is, for ``auth_cache_s`` (auth/cache.py: the staleness bound)
    principals: PrincipalCache = field(default_factory=lambda: PrincipalCache(0))
    #: this process in the deployment-wide duty leases it takes (db/singleton.py)
    instance_id: str = field(default_factory=new_holder_id)

    async def start(self) -> None:
        for s in self.services:
            await s.start()

    async def stop(self) -> None:
        for s in reversed(self.services):
            await s.stop()
        # forks this process answered and is still copying: a few seconds to finish (a copy
        # cut short is rolled back; its queued job copies it again, on any replica)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(forks.copies_done(), FORK_COPY_GRACE_S)
        await self.providers.aclose()
        await self.db.dispose()
        self.telemetry.tracing.shutdown()

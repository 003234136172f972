"""One running turn: context → provider stream → event log → final row, detached from any request.

A ``TurnRunner`` is created by service.start_turn/regenerate after the user message, the assistant
placeholder, the first event and the lease are committed. It runs as its own task (capped at
``turn_cap_s``) with two helpers: a flusher writing new events and the partial message every
``flush_interval_ms``, and a heartbeat renewing the lease (and noticing a stop asked on another
replica, or that the lease was lost to the sweeper). No database connection is held while the model
is called.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..agents import service as agents_service
from ..auth.models import Principal
from ..context import service as context_service
from ..conversations import blocks as blk
from ..conversations import followups, store
from ..db import faults
from ..db.clock import now_ms
from ..embeddings import embeddings_on
from ..jobs.queue import Job
from ..observability.telemetry import TurnRecord, outcome_of
from ..providers import errors as perr
from ..providers.base import (
    ChatMessage,
    Finish,
    ModelInfo,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
    estimate_tokens,
)
from ..unicode import scrub
from . import leases, pricing
from .events import LiveLog
from .finalize import end_message_row, end_turn_at_once, ended_with, reclaim
from .stops import StopScanner

log = logging.getLogger("chatmem.generation")

#: How long a turn waits for an unreachable database before failing as ``context_error``.
CONTEXT_RETRY_S = 60.0

#: Turn-level error codes beside the providers' (providers/errors.py); the README's "Error
#: codes" table lists both. Their messages are fixed: exception text goes to the log only.
TURN_ERRORS = {
    "context_error": "the context for this answer could not be assembled",
    "provider_crashed": "the model provider failed unexpectedly",
    "generation_interrupted": "the server shut down before this answer finished",
}


@dataclass(frozen=True)
class TurnRequest:
    """What an OpenAI-compatible call adds to a turn: the client's system prompt (placed before
    chatmem's own), stop sequences, and parameters for providers that accept options."""

    system: str = ""
    stop: tuple[str, ...] = ()
    options: dict = field(default_factory=dict)
    max_tokens: int | None = None  # at most the model's max_output


@dataclass
class TurnSpec:
    principal: Principal
    conv_id: str
    user_message_id: str
    assistant_message_id: str
    model: ModelInfo
    token: str
    first_turn: bool
    run_hook: bool
    started_ms: int
    request: TurnRequest | None = None
    #: the user message's visible text when the turn wrote it (start_turn): the hook needs no read
    user_text: str | None = None
    #: the conversation row as the turn's first transaction left it (no read before the context)
    conv: Any = None
    #: the answered path's rows, newest first, when the turn wrote all of it (a new root
    #: question, context.gather.PathRow): the context reads no path
    path: list | None = None
    #: the user had no memory row when the turn's first transaction ran
    #: (store.conversation_for_turn): the context reads none unless ``before_turn`` wrote one
    no_memories: bool = False
    #: the answer's row as inserted, when it is its question's only child (start_turn): on
    #: PostgreSQL the final write is then one statement (finalize.end_turn_at_once)
    placeholder: Any = None


def _with_client_system(messages: list[ChatMessage], req: TurnRequest | None) -> list:
    """The client's system prompt first, then chatmem's (persona, memories, summary, recall)."""
    if req is None or not req.system:
        return messages
    if messages and messages[0].role == "system":
        merged = f"{req.system}\n\n{messages[0].content}" if messages[0].content else req.system
        return [ChatMessage("system", merged), *messages[1:]]
    return [ChatMessage("system", req.system), *messages]


def _may_have_remembered(report) -> bool:
    """Whether a ``before_turn`` hook's report leaves open that it wrote a memory: anything but
    a dict with an empty (or no) ``remembered`` and no ``error`` (memory/hooks.before_turn's
    report for a message that is no command)."""
    return not isinstance(report, dict) or bool(report.get("remembered")) or "error" in report


class TurnRunner:
    def __init__(self, rt, state, spec: TurnSpec, live: LiveLog) -> None:
        self.rt, self.state, self.spec, self.live = rt, state, spec, live
        s = rt.settings
        self.flush_s = s.flush_interval_ms / 1000
        self.timing = leases.Timing.of(s)
        self.poll_s = min(s.stop_poll_ms / 1000, self.timing.renew_s)
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.usage: Usage | None = None
        self.tool_calls: list[dict] = []
        self.finish = "end_turn"
        self.report: dict = {}
        self.context_tokens = 0
        self.stop_event = asyncio.Event()
        self.stop_cause: str | None = None  # stopped | lost | shutdown
        self.task: asyncio.Task | None = None
        self.finalizing = False  # the final write owns the pending events from then on
        self.row_written_ms = 0  # when the flusher last rewrote the partial row
        self.first_token_ms: int | None = None  # from the turn's start (telemetry)
        self.last_renew = time.monotonic()  # the lease; flushes renew it too (flusher.py)
        self._helpers_done = asyncio.Event()
        self._consuming: asyncio.Task | None = None  # the provider stream, while it runs

    # ── control ────────────────────────────────────────────────────────────────────────────────
    def request_stop(self, cause: str = "stopped") -> None:
        if self.stop_cause is None:
            self.stop_cause = cause
        self.stop_event.set()
        if self._consuming is not None:  # the model call (never inside a database call)
            self._consuming.cancel()

    def blocks(self) -> list[dict]:
        return blk.streamed("".join(self.thinking), "".join(self.text), self.tool_calls)

    # ── the turn ───────────────────────────────────────────────────────────────────────────────
    async def run(self) -> None:
        spec, tel = self.spec, self.rt.telemetry
        tel.turn_started(provider=spec.model.provider, model=spec.model.id)
        with tel.span("chatmem.turn", **self._span_attrs()):
            await self._run()

    def _span_attrs(self) -> dict:
        spec = self.spec
        return {
            "chatmem.conversation_id": spec.conv_id,
            "chatmem.message_id": spec.assistant_message_id,
            "gen_ai.system": spec.model.provider,
            "gen_ai.request.model": spec.model.id,
        }

    async def _run(self) -> None:
        # Helpers are never cancelled: a task cancelled inside a database call can leave its
        # connection mid-transaction (on SQLite, holding the write lock). They stop at a wait.
        # The heartbeat's first beat is due ``poll_s`` after the start: its task is created then
        # (a turn over by that time — a short answer — needs none); flushing: flusher.py.
        helpers: list[asyncio.Task] = []
        beat = asyncio.get_running_loop().call_later(
            self.poll_s, lambda: helpers.append(asyncio.create_task(self._heartbeat()))
        )
        try:
            outcome = await self._generate()
            beat.cancel()
            self._helpers_done.set()
            await asyncio.gather(*helpers, return_exceptions=True)
            await self._finalize(*outcome)
        except Exception:  # pragma: no cover - last resort; the sweeper will end the row
            log.exception("turn %s failed while finishing", self.spec.assistant_message_id)
        finally:
            beat.cancel()
            self._helpers_done.set()
            self.live.close()
            self.state.forget(self)

    async def _pause(self, seconds: float) -> bool:
        """Wait between helper iterations; False once the turn is over."""
        if self._helpers_done.is_set():
            return False
        try:
            async with asyncio.timeout(seconds):  # a timer, not a task per wait
                await self._helpers_done.wait()
            return False
        except TimeoutError:
            return True

    async def _generate(self) -> tuple:
        """Returns (status, stop_reason, error_code, error_message)."""
        try:
            # a transient database failure while reading the context is retried, not the answer
            messages = await faults.retrying(
                self._prepare,
                what=f"turn {self.spec.assistant_message_id} context",
                attempts=1000,
                max_s=1.0,
                deadline_s=CONTEXT_RETRY_S,
            )
        except Exception:  # a failing hook or context builder is this turn's error
            log.exception("turn %s: context failed", self.spec.assistant_message_id)
            return ("error", "error", "context_error", TURN_ERRORS["context_error"])
        # message_start goes out with the next flush from now (or with a quick answer's final
        # write): held back while the context was read, it costs no flush of its own
        self.live.nudge()
        # one task for the model call: a stop (request_stop) cancels it, the turn cap times it out
        consume = self._consuming = asyncio.create_task(self._consume_traced(messages))
        if self.stop_event.is_set():  # asked while the context was read
            consume.cancel()
        done, _ = await asyncio.wait({consume}, timeout=self.rt.settings.turn_cap_s)
        self._consuming = None
        if not done or (consume.cancelled() and self.stop_event.is_set()):
            consume.cancel()
            await asyncio.gather(consume, return_exceptions=True)
            if not done:
                return ("complete", "max_duration", None, None)
            if self.stop_cause == "stopped":
                return ("complete", "stopped", None, None)
            if self.stop_cause == "shutdown":
                return (
                    "error",
                    "error",
                    "generation_interrupted",
                    TURN_ERRORS["generation_interrupted"],
                )
            return ("lost", None, None, None)
        exc = asyncio.CancelledError() if consume.cancelled() else consume.exception()
        if exc is None:
            return ("complete", self.finish, None, None)
        if isinstance(exc, ProviderError):
            code = perr.known(exc.code)  # one vocabulary whatever the provider said
            return ("error", "error", code, str(exc) or perr.CODES[code])
        log.error("turn %s: provider crashed", self.spec.assistant_message_id, exc_info=exc)
        return ("error", "error", "provider_crashed", TURN_ERRORS["provider_crashed"])

    async def _prepare(self):
        """The context, read with the inline-compaction check when no compaction is due (the
        common case); else compact first and read it again. The reads need not agree with each
        other (``read_snapshots``): the path is one statement, the memories others."""
        rt, spec = self.rt, self.spec
        memories = not spec.no_memories
        if rt.before_turn is not None and spec.run_hook:
            done = await rt.before_turn(
                rt, spec.principal, spec.conv_id, spec.user_message_id, user_text=spec.user_text
            )
            memories = memories or _may_have_remembered(done)
        await context_service.warm_query(
            rt,
            user_id=spec.principal.id,
            conversation_id=spec.conv_id,
            message_id=spec.user_message_id,
        )
        compacted = ctx = None
        async with rt.db.read_snapshots() as c:
            # as start_turn left it: a summary committed since then only means a longer tail
            conv = spec.conv
            if conv is None:
                conv = await store.get_conversation(c, spec.principal.id, spec.conv_id)
            due, tail = await self._compaction_due(c, conv)
            if due is False:
                ctx = await self._context(c, conv, tail, memories)
        if ctx is None:
            compacted = await self._compact_first() if due else None
            async with rt.db.read_snapshots() as c:
                conv = await store.get_conversation(c, spec.principal.id, spec.conv_id)
                ctx = await self._context(c, conv, memories=memories)
        context_service.record_compaction(ctx.report, compacted)
        self.report = ctx.report or {}
        self.context_tokens = int(self.report.get("total_tokens") or 0) or sum(
            estimate_tokens(m.content) for m in ctx.messages
        )
        return _with_client_system(ctx.messages, spec.request)

    async def _context(self, c, conv, tail=None, memories: bool = True):
        spec = self.spec
        return await context_service.build_turn_context(
            c,
            conv=conv,
            settings=self.rt.settings,
            parent_id=spec.user_message_id,
            model=spec.model,
            principal=spec.principal,
            rt=self.rt,
            tail=tail,
            known=spec.path,
            memories=memories,
        )

    async def _compaction_due(self, c, conv) -> tuple[bool | None, Any]:
        """Whether to compact inline before the context is read (None when the check failed: the
        turn goes on without compacting, in a fresh transaction), and the tail it read."""
        if not self.rt.settings.inline_compaction:
            return False, None
        try:
            return await context_service.inline_compaction_needed(
                c,
                settings=self.rt.settings,
                conv=conv,
                parent_id=self.spec.user_message_id,
                model=self.spec.model,
                known=self.spec.path,
            )
        except Exception:
            log.exception("turn %s: inline compaction failed", self.spec.assistant_message_id)
            return None, None

    async def _compact_first(self):
        """Inline compaction, before any connection is held for the context read; a ``compaction``
        event tells the client. A failed summary never fails the turn (the assembler still fits
        the window by dropping the oldest history)."""
        spec = self.spec
        t0 = time.monotonic()
        try:
            res = await context_service.compact_inline(
                self.rt,
                conversation_id=spec.conv_id,
                user_id=spec.principal.id,
                parent_id=spec.user_message_id,
                model=spec.model,
            )
        except Exception:
            log.exception("turn %s: inline compaction failed", spec.assistant_message_id)
            return None
        if res is None or not res.compacted:
            return None
        self.rt.telemetry.compaction("inline", time.monotonic() - t0)
        self.live.add("compaction", {"mode": "inline", **res.public()})
        return res

    async def _consume_traced(self, messages) -> None:
        with self.rt.telemetry.span("chatmem.provider.stream", **self._span_attrs()):
            await self._consume(messages)

    def _first_token(self) -> None:
        if self.first_token_ms is None:
            self.first_token_ms = now_ms() - self.spec.started_ms
            m = self.spec.model
            self.rt.telemetry.first_token(
                provider=m.provider, model=m.id, seconds=self.first_token_ms / 1000
            )

    async def _consume(self, messages) -> None:
        provider = self.rt.providers.provider(self.spec.model.provider)
        req = self.spec.request or TurnRequest()
        max_tokens = min(self.spec.model.max_output, req.max_tokens or self.spec.model.max_output)
        kw = {}
        if getattr(provider, "accepts_options", False) and (req.options or req.stop):
            kw["options"] = {**req.options, **({"stop": list(req.stop)} if req.stop else {})}
        stops = StopScanner(req.stop)
        agen = provider.stream(self.spec.model, messages, max_tokens=max_tokens, **kw)
        try:
            async for e in agen:
                # a model's text is made storable (an upstream may send "\ud800" in its JSON)
                if isinstance(e, TextDelta):
                    text = scrub(e.text)
                    self._text(stops.feed(text) if stops.stops else text)
                    if stops.stopped:
                        self.finish = "stop_sequence"
                        break
                elif isinstance(e, ToolCall):
                    call = {"kind": "tool_call", "id": scrub(e.id), "name": scrub(e.name)}
                    call["arguments"] = scrub(e.arguments)
                    self.tool_calls.append(call)
                    self.live.add("tool_call", {k: v for k, v in call.items() if k != "kind"})
                elif isinstance(e, ThinkingDelta):
                    if e.text:
                        self._first_token()
                        text = scrub(e.text)
                        self.thinking.append(text)
                        self.live.add("thinking_delta", {"text": text})
                elif isinstance(e, Usage):
                    self.usage = e
                elif isinstance(e, Finish):
                    self.finish = e.stop_reason
            self._text(stops.flush())
        finally:
            await agen.aclose()

    def _text(self, text: str) -> None:
        if text:
            if self.first_token_ms is None:
                self._first_token()
            self.text.append(text)
            self.live.add_text("text_delta", text)

    # ── durability ─────────────────────────────────────────────────────────────────────────────
    async def _heartbeat(self) -> None:
        """Every ``poll_s`` from ``poll_s`` after the start (``_run``): renew the lease when due,
        else read it (a stop asked on another replica, or the lease lost to the sweeper)."""
        while True:
            try:
                renew = time.monotonic() - self.last_renew >= self.timing.renew_s
                # one statement either way, outside a transaction: the renewal's RETURNING is
                # the lease's state (PostgreSQL: one round trip, not four, per turn and beat)
                if renew:
                    async with self.rt.db.write_once() as c:
                        hold = self.timing.hold_ms
                        st = await leases.renew(c, self.spec.token, hold, now_ms())
                    self.last_renew = time.monotonic()
                else:
                    async with self.rt.db.read_once() as c:
                        st = await leases.state(c, self.spec.token)
                if st == "stop":
                    self.request_stop("stopped")
                elif st == "lost":
                    self.request_stop("lost")
            except Exception as e:  # the next beat tries again
                if not faults.is_transient(e):
                    log.exception("turn %s: heartbeat failed", self.spec.assistant_message_id)
                else:
                    log.warning(
                        "turn %s: heartbeat: database unavailable", self.spec.assistant_message_id
                    )
            if not await self._pause(self.poll_s):
                return

    async def _finalize(self, status, stop_reason, code, message) -> None:
        spec = self.spec
        if status == "lost":  # the sweeper ended it (the turn log line says so, as a warning)
            self._report("lost", None, None, None)
            return
        text = "".join(self.text)
        b = pricing.bill(
            spec.model,
            self.usage,
            context_tokens=self.context_tokens,
            output_text=text + "".join(self.thinking),
            credits_per_usd=self.rt.settings.credits_per_usd,
        )
        blocks = self.blocks()
        if status == "error":
            blocks = [*blocks, {"kind": "error", "code": code, "text": message}]
        values = dict(
            status=status,
            stop_reason=stop_reason,
            error=message or "",
            blocks=blocks,
            cost=b.cost,
            credits=b.credits,
            gen_ms=now_ms() - spec.started_ms,
            metadata={"context": self.report},
            **b.usage(),
        )
        self.finalizing = True
        pending = self.live.pending()
        seq = self.live.last_seq
        usage_ev: dict[str, Any] = {
            "seq": seq + 1,
            "type": "usage",
            "data": {**b.usage(), "credits": b.credits},
        }
        terminal, terminal_data = (
            ("error", {"code": code, "message": message})
            if status == "error"
            else ("done", {"stop_reason": stop_reason})
        )

        async def write():
            return await self._write_end(values, [*pending, usage_ev], terminal, terminal_data)

        # A finished answer is never dropped for a database hiccup: the final write is retried
        # with backoff (the answer is in memory) for as long as a turn may run.
        final = await faults.retrying(
            write,
            what=f"turn {spec.assistant_message_id} final write",
            attempts=1_000_000,
            max_s=5.0,
            deadline_s=self.rt.settings.turn_cap_s,
        )
        self._report(status if final is not None else "lost", stop_reason, code, b)
        if final is None:
            return
        self.live.mark_flushed(self.live.last_seq)
        self.live.add("usage", usage_ev["data"], durable=True)
        self.live.add(final["type"], final["data"], durable=True)

    async def _write_end(self, values, events, terminal, terminal_data):
        """The final write once: on PostgreSQL one statement when it may be
        (``_ends_at_once``); when that writes nothing, or else, a transaction (``_end``)."""
        spec = self.spec
        if self._ends_at_once():
            async with self.rt.db.write_once() as c:
                final = await end_turn_at_once(
                    c,
                    spec.placeholder,
                    values=values,
                    events=events,
                    terminal=terminal,
                    terminal_data=terminal_data,
                    lease=(spec.conv_id, spec.token),
                    jobs=self._jobs() if terminal == "done" else [],
                    now=now_ms(),
                )
            if final is not None:
                return final
        async with self.rt.db.write() as c:
            return await self._end(c, values, events, terminal, terminal_data)

    def _report(self, status, stop_reason, code, b: pricing.Bill | None) -> None:
        """The operator's record of this turn: metrics and its one log line (observability)."""
        spec = self.spec
        self.rt.telemetry.turn_finished(
            TurnRecord(
                conversation_id=spec.conv_id,
                message_id=spec.assistant_message_id,
                user_id=spec.principal.id,
                provider=spec.model.provider,
                model=spec.model.id,
                outcome=outcome_of(status, stop_reason, code),
                stop_reason=stop_reason,
                error_code=code,
                input_tokens=b.input_tokens if b else 0,
                output_tokens=b.output_tokens if b else 0,
                context_tokens=self.context_tokens,
                cost_usd=b.cost if b else 0.0,
                credits=b.credits if b else 0.0,
                first_token_ms=self.first_token_ms,
                duration_ms=now_ms() - spec.started_ms,
            )
        )

    async def _end(self, c, values, events, terminal, terminal_data):
        """The final write, safe to repeat: if an earlier try committed without its answer
        reaching us, find its closing event; if a sweeper ended the row as interrupted while
        the database was out of reach, put the finished answer back (finalize.reclaim)."""
        mid = self.spec.assistant_message_id
        kw = dict(values=values, events=events, terminal=terminal, terminal_data=terminal_data)
        kw["lease"] = (self.spec.conv_id, self.spec.token)
        ended = await end_message_row(c, mid, **kw)
        if ended is None:
            done = await ended_with(c, mid, events[-1]["seq"] + 1, terminal)
            if done is not None:
                return done  # our earlier try committed: its jobs are enqueued too
            if not await reclaim(c, mid, after_seq=self.live.flushed):
                return None
            ended = await end_message_row(c, mid, **kw)
        if ended is None:
            return None
        final, row = ended
        if terminal == "done":
            await self._enqueue_jobs(c)
            if row.agent_id and row.search_text:  # the ended row, as written
                await agents_service.record_reply(c, row.agent_id, row.search_text, row.created_at)
        return final

    def _ends_at_once(self) -> bool:
        """Whether the final write may be one statement (PostgreSQL; finalize.end_turn_at_once):
        the turn holds its row as inserted, and the ending writes nothing beyond the row, its
        events, its lease and its jobs (no agent's reply to record, no embedding job, whose
        ``schedule_embedding`` is a statement of its own)."""
        row = self.spec.placeholder
        db = self.rt.db
        return row is not None and not db.sqlite and not row.agent_id and not embeddings_on(db)

    def _title(self) -> tuple[Job, ...]:
        cid = self.spec.conv_id
        return (
            (Job("title", {"conversation_id": cid}, f"title:{cid}"),)
            if self.spec.first_turn
            else ()
        )

    def _jobs(self) -> list[Job]:
        """``followups.after_append``'s jobs for this answer (without the embedding job)."""
        spec = self.spec
        payload = {
            "conversation_id": spec.conv_id,
            "user_id": spec.principal.id,
            "message_id": spec.assistant_message_id,
        }
        return followups.jobs_for(payload, 0, self._title())

    async def _enqueue_jobs(self, c) -> None:
        spec = self.spec
        await followups.after_append(
            c,
            conversation_id=spec.conv_id,
            user_id=spec.principal.id,
            message_id=spec.assistant_message_id,
            also=self._title(),
        )

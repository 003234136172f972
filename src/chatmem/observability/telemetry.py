"""The hooks domains report into: ``rt.telemetry.turn_finished(...)``, ``job_finished(...)`` …

Why it exists: a turn's end is one event for the operator — a counter per outcome, token and
cost counters, a duration, one log line with its ids, a span attribute — and the code that ends
turns should say that in one call, not five. Each hook is cheap and never raises into the
caller (telemetry must not fail a turn or a job).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from opentelemetry import trace

from .logs import TURN_LOGGER
from .metrics import Metrics
from .tracing import Tracing

log = logging.getLogger(__name__)
turn_log = logging.getLogger(TURN_LOGGER)
#: ``Telemetry.span`` with tracing off (reusable: it only returns the invalid span)
_NO_SPAN = contextlib.nullcontext(trace.INVALID_SPAN)


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn, as the operator sees it (the turn log line carries every field)."""

    conversation_id: str
    message_id: str
    user_id: str
    provider: str
    model: str
    outcome: str  # complete | stopped | error | interrupted | lost
    stop_reason: str | None
    error_code: str | None
    input_tokens: int
    output_tokens: int
    context_tokens: int
    cost_usd: float
    credits: float
    first_token_ms: int | None
    duration_ms: int


def outcome_of(status: str, stop_reason: str | None, code: str | None) -> str:
    """The turn-finished counter's outcome for a turn's final status."""
    if status == "lost":
        return "lost"
    if status == "error":
        return "interrupted" if code == "generation_interrupted" else "error"
    return "stopped" if stop_reason == "stopped" else "complete"


class _TurnSeries:
    """One (provider, model)'s turn metrics, their labels resolved once: ``labels()`` validates
    and looks its arguments up under a lock on every call (six calls a turn)."""

    def __init__(self, m: Metrics, provider: str, model: str) -> None:
        self.started = m.turns_started.labels(provider, model)
        self.first_token = m.turn_first_token.labels(provider, model)
        self.duration = m.turn_duration.labels(provider, model)
        self.input_tokens = m.turn_tokens.labels(provider, model, "input")
        self.output_tokens = m.turn_tokens.labels(provider, model, "output")
        self.cost = m.turn_cost.labels(provider, model)


class Telemetry:
    def __init__(self, metrics: Metrics | None = None, tracing: Tracing | None = None) -> None:
        self.metrics = metrics or Metrics()
        self.tracing = tracing or Tracing.off()
        self._series: dict[tuple[str, str], _TurnSeries] = {}

    def _turn_series(self, provider: str, model: str) -> _TurnSeries:
        got = self._series.get((provider, model))
        if got is None:  # the catalogue's models: a handful of entries
            got = self._series[(provider, model)] = _TurnSeries(self.metrics, provider, model)
        return got

    @classmethod
    def from_settings(cls, settings) -> Telemetry:
        return cls(Metrics(), Tracing.from_settings(settings))

    def span(self, name: str, **attrs):
        """A child span of the current one; with tracing off, nothing (no context to set: a
        no-op span still cost ~20 µs, twice a turn)."""
        if not self.tracing.enabled:
            return _NO_SPAN
        return self.tracing.span(name, **attrs)

    # ── turns ──────────────────────────────────────────────────────────────────────────────────
    def turn_started(self, *, provider: str, model: str) -> None:
        self._turn_series(provider, model).started.inc()

    def first_token(self, *, provider: str, model: str, seconds: float) -> None:
        self._turn_series(provider, model).first_token.observe(max(seconds, 0.0))

    def turn_finished(self, r: TurnRecord) -> None:
        try:
            m, s = self.metrics, self._turn_series(r.provider, r.model)
            m.turns_finished.labels(r.provider, r.model, r.outcome).inc()
            s.duration.observe(r.duration_ms / 1000)
            if r.error_code:
                m.turn_errors.labels(r.provider, r.model, r.error_code).inc()
            s.input_tokens.inc(max(r.input_tokens, 0))
            s.output_tokens.inc(max(r.output_tokens, 0))
            s.cost.inc(max(r.cost_usd, 0.0))
            level = logging.WARNING if r.outcome in ("error", "lost") else logging.INFO
            # its fields are flat: a copy of them (dataclasses.asdict deep-copies each, ~20 µs)
            turn_log.log(level, "turn finished", extra=dict(vars(r)))
        except Exception:  # pragma: no cover - telemetry never fails a turn
            log.exception("turn telemetry failed")

    # ── background work ────────────────────────────────────────────────────────────────────────
    def job_finished(self, kind: str, outcome: str, seconds: float) -> None:
        self.metrics.job_runs.labels(kind, outcome).inc()
        self.metrics.job_duration.labels(kind).observe(max(seconds, 0.0))

    def job_claimed(self, kind: str, lag_s: float) -> None:
        self.metrics.job_lag.labels(kind).observe(max(lag_s, 0.0))

    def swept(self, *, turns_ended: int = 0, events_pruned: int = 0) -> None:
        if turns_ended:
            self.metrics.sweeper_actions.labels("turn_ended").inc(turns_ended)
        if events_pruned:
            self.metrics.sweeper_actions.labels("events_pruned").inc(events_pruned)

    def compaction(self, mode: str, seconds: float) -> None:
        self.metrics.compaction_duration.labels(mode).observe(max(seconds, 0.0))

    def extraction(self, extractor: str, seconds: float) -> None:
        self.metrics.extraction_duration.labels(extractor).observe(max(seconds, 0.0))

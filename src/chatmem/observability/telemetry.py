"""The hooks domains report into: ``rt.telemetry.turn_finished(...)``, ``job_finished(...)`` …

Why it exists: a turn's end is one event for the operator — a counter per outcome, token and
cost counters, a duration, one log line with its ids, a span attribute — and the code that ends
turns should say that in one call, not five. Each hook is cheap and never raises into the
caller (telemetry must not fail a turn or a job).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from .logs import TURN_LOGGER
from .metrics import Metrics
from .tracing import Tracing

log = logging.getLogger(__name__)
turn_log = logging.getLogger(TURN_LOGGER)


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


class Telemetry:
    def __init__(self, metrics: Metrics | None = None, tracing: Tracing | None = None) -> None:
        self.metrics = metrics or Metrics()
        self.tracing = tracing or Tracing.off()

    @classmethod
    def from_settings(cls, settings) -> Telemetry:
        return cls(Metrics(), Tracing.from_settings(settings))

    def span(self, name: str, **attrs):
        return self.tracing.span(name, **attrs)

    # ── turns ──────────────────────────────────────────────────────────────────────────────────
    def turn_started(self, *, provider: str, model: str) -> None:
        self.metrics.turns_started.labels(provider, model).inc()

    def first_token(self, *, provider: str, model: str, seconds: float) -> None:
        self.metrics.turn_first_token.labels(provider, model).observe(max(seconds, 0.0))

    def turn_finished(self, r: TurnRecord) -> None:
        try:
            m = self.metrics
            m.turns_finished.labels(r.provider, r.model, r.outcome).inc()
            m.turn_duration.labels(r.provider, r.model).observe(r.duration_ms / 1000)
            if r.error_code:
                m.turn_errors.labels(r.provider, r.model, r.error_code).inc()
            m.turn_tokens.labels(r.provider, r.model, "input").inc(max(r.input_tokens, 0))
            m.turn_tokens.labels(r.provider, r.model, "output").inc(max(r.output_tokens, 0))
            m.turn_cost.labels(r.provider, r.model).inc(max(r.cost_usd, 0.0))
            level = logging.WARNING if r.outcome in ("error", "lost") else logging.INFO
            turn_log.log(level, "turn finished", extra=asdict(r))
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

"""The process's Prometheus metrics: one registry per Runtime, every metric a typed attribute.

Why it exists: the metric names, their labels and their buckets are an operator contract (the
Grafana dashboard in deploy/grafana/ and any alert rules depend on them), so they are declared
together here rather than scattered through the code that records them. A registry per Runtime
(not prometheus_client's global one) lets tests build several apps in one process.

Label values are bounded: HTTP routes are route templates (``/api/conversations/{cid}``), never
raw paths; providers and models come from the configured catalogue; job kinds from the
registered handlers. Values that are read rather than counted (queue depth, pool usage, running
turns) are set by ``ops.metrics_view.refresh`` just before each scrape.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

#: Seconds; spans fast API reads (ms) to slow model calls (minutes).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
MODEL_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, 900)
WORK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

#: Every turn outcome the turn-finished counter can carry.
TURN_OUTCOMES = ("complete", "stopped", "error", "interrupted", "lost")


class Metrics:
    """Every metric this process exports (``chatmem_`` prefix)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._http()
        self._turns()
        self._background()
        self._pool()

    def _counter(self, name: str, doc: str, *labels: str) -> Counter:
        return Counter(name, doc, labels, registry=self.registry)

    def _gauge(self, name: str, doc: str, *labels: str) -> Gauge:
        return Gauge(name, doc, labels, registry=self.registry)

    def _histogram(self, name: str, doc: str, buckets, *labels: str) -> Histogram:
        return Histogram(name, doc, labels, buckets=buckets, registry=self.registry)

    def _http(self) -> None:
        self.http_requests = self._counter(
            "chatmem_http_requests",
            "HTTP requests answered, by method, route template and status",
            *("method", "route", "status"),
        )
        self.http_duration = self._histogram(
            "chatmem_http_request_duration_seconds",
            "Time from a request's arrival to its response's first byte (its headers)",
            LATENCY_BUCKETS,
            *("method", "route"),
        )
        self.http_in_flight = self._gauge(
            "chatmem_http_requests_in_flight", "Requests being handled now"
        )
        self.sse_streams = self._gauge(
            "chatmem_sse_streams_open", "Server-sent event streams open to clients on this process"
        )

    def _turns(self) -> None:
        pm = ("provider", "model")
        self.turns_started = self._counter(
            "chatmem_turns_started", "Turns (model answers) started, by provider and model", *pm
        )
        self.turns_finished = self._counter(
            "chatmem_turns_finished",
            "Turns ended, by provider, model and outcome "
            "(complete | stopped | error | interrupted | lost)",
            *pm,
            "outcome",
        )
        self.turn_errors = self._counter(
            "chatmem_turn_errors",
            "Turns that ended in an error, by provider, model and error code",
            *pm,
            "code",
        )
        self.turn_first_token = self._histogram(
            "chatmem_turn_first_token_seconds",
            "Time from a turn's start to the model's first text or thinking token",
            MODEL_BUCKETS,
            *pm,
        )
        self.turn_duration = self._histogram(
            "chatmem_turn_duration_seconds",
            "Time from a turn's start to its final write",
            MODEL_BUCKETS,
            *pm,
        )
        self.turn_tokens = self._counter(
            "chatmem_turn_tokens",
            "Tokens of finished turns, by provider, model and direction (input | output)",
            *pm,
            "direction",
        )
        self.turn_cost = self._counter(
            "chatmem_turn_cost_usd",
            "Cost of finished turns in USD (the catalogue's prices), by provider and model",
            *pm,
        )
        self.turns_running = self._gauge(
            "chatmem_turns_running", "Turns this process is generating now"
        )

    def _background(self) -> None:
        self.job_runs = self._counter(
            "chatmem_job_runs",
            "Job attempts run by this process's worker, by kind and outcome "
            "(done | retry | failed | lost)",
            *("kind", "outcome"),
        )
        self.job_duration = self._histogram(
            "chatmem_job_duration_seconds",
            "Time one job attempt ran, by kind",
            WORK_BUCKETS,
            "kind",
        )
        self.job_lag = self._histogram(
            "chatmem_job_lag_seconds",
            "Time a job waited from when it was due to when a worker claimed it, by kind",
            WORK_BUCKETS,
            "kind",
        )
        self.jobs = self._gauge(
            "chatmem_jobs",
            "Jobs in the queue (the whole database), by kind and status",
            "kind",
            "status",
        )
        self.job_oldest_age = self._gauge(
            "chatmem_jobs_oldest_due_age_seconds",
            "How long the oldest due queued job of each kind has been waiting (0 = none)",
            "kind",
        )
        self.workers_alive = self._gauge(
            "chatmem_workers_alive",
            "Job workers whose heartbeat was seen recently (the whole deployment)",
        )
        self.sweeper_actions = self._counter(
            "chatmem_sweeper_actions",
            "What the sweeper did: turns ended as interrupted, event rows pruned",
            "action",
        )
        self.compaction_duration = self._histogram(
            "chatmem_compaction_duration_seconds",
            "Time a compaction that wrote a summary took, by mode (inline | job | manual)",
            WORK_BUCKETS,
            "mode",
        )
        self.extraction_duration = self._histogram(
            "chatmem_memory_extraction_duration_seconds",
            "Time one batch of memory extraction took, by extractor",
            WORK_BUCKETS,
            "extractor",
        )

    def _pool(self) -> None:
        """The database connection pool of this process."""
        self.db_pool_size = self._gauge(
            "chatmem_db_pool_size", "Connections the pool keeps (its configured size)"
        )
        self.db_pool_checked_out = self._gauge(
            "chatmem_db_pool_checked_out", "Connections in use now"
        )
        self.db_pool_overflow = self._gauge(
            "chatmem_db_pool_overflow",
            "Connections open beyond the pool size (negative: not yet opened)",
        )
        self.db_pool_idle = self._gauge(
            "chatmem_db_pool_idle", "Open connections waiting in the pool"
        )

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)

    def names(self) -> set[str]:
        """Every sample name this registry can export (the dashboard test checks against it)."""
        out: set[str] = set()
        for family in self.registry.collect():
            out.add(family.name)
            out.update(s.name for s in family.samples)
            if family.type == "histogram":
                out.update(f"{family.name}{x}" for x in ("_bucket", "_sum", "_count"))
            elif family.type == "counter":
                out.add(f"{family.name}_total")
        return out

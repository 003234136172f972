"""Optional OpenTelemetry tracing: spans for requests, turns, provider calls and database calls.

Why it exists: when a slow answer needs explaining, a trace shows where the time went (the
request, the context read, the model's first token, each SQL statement). It is off unless
``CHATMEM_OTEL_ENABLED=true``; then it needs the ``[otel]`` extra (the SDK and the OTLP/HTTP
exporter, configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables). The OpenTelemetry *API*
is always importable (a dependency of FastAPI and ours): with tracing off every span is the API's
no-op span and costs next to nothing.

Each Runtime gets its own ``TracerProvider`` (never the process-global one), so tests can attach
an in-memory exporter to one app. Database spans come from SQLAlchemy's cursor events on this
runtime's engine (``instrument_engine``) — the contrib SQLAlchemy instrumentor instruments once
per process, which does not fit an engine per Runtime.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import NoOpTracer, SpanKind, Status, StatusCode, Tracer
from sqlalchemy import event

try:  # the [otel] extra
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )
except ImportError:  # pragma: no cover - exercised where the extra is not installed
    TracerProvider = None  # type: ignore[assignment,misc]  # the name doubles as "SDK missing"

EXPORTERS = ("otlp", "console", "none")
STATEMENT_MAX_CHARS = 2000


def sdk_installed() -> bool:
    return TracerProvider is not None


class Tracing:
    """This runtime's tracer (a no-op one when tracing is off)."""

    def __init__(self, tracer: Tracer, provider: Any = None) -> None:
        self.tracer = tracer
        #: the SDK ``TracerProvider`` when tracing is on (tests add span processors to it)
        self.provider = provider

    @property
    def enabled(self) -> bool:
        return self.provider is not None

    @classmethod
    def off(cls) -> Tracing:
        return cls(NoOpTracer())

    @classmethod
    def from_settings(cls, settings) -> Tracing:
        if not settings.otel_enabled:
            return cls.off()
        if not sdk_installed():
            raise ValueError(
                "CHATMEM_OTEL_ENABLED is set but the OpenTelemetry SDK is not installed: "
                "pip install 'chatmem[otel]'"
            )
        resource = Resource.create({"service.name": settings.otel_service_name})
        provider = TracerProvider(resource=resource)
        if settings.otel_exporter == "otlp":
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif settings.otel_exporter == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        return cls(provider.get_tracer("chatmem"), provider)

    @contextmanager
    def span(self, name: str, *, kind: SpanKind = SpanKind.INTERNAL, **attrs: Any) -> Iterator:
        """A child span of the current one; an exception marks it failed and propagates."""
        with self.tracer.start_as_current_span(
            name, kind=kind, attributes=_attrs(attrs), record_exception=True
        ) as sp:
            yield sp

    def server_span(self, name: str, headers: dict[str, str], **attrs: Any):
        """A request's span, continuing the caller's trace (W3C ``traceparent``) if it sent one;
        the caller ends it (``span.end()``) once the response is complete."""
        ctx = propagate.extract(headers)
        return self.tracer.start_span(name, context=ctx, kind=SpanKind.SERVER, attributes=attrs)

    @staticmethod
    def use(span):
        """Make ``span`` the current one inside the block (it is not ended on exit)."""
        return trace.use_span(span, end_on_exit=False, record_exception=False)

    @staticmethod
    def error_status(description: str) -> Status:
        return Status(StatusCode.ERROR, description)

    def instrument_engine(self, engine, dialect: str) -> None:
        """A span per SQL statement on ``engine`` (an AsyncEngine), child of the current span."""
        if not self.enabled:
            return
        tracer = self.tracer

        @event.listens_for(engine.sync_engine, "before_cursor_execute")
        def _before(_conn, _cursor, statement, _params, context, _many):
            op = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "SQL"
            context._chatmem_span = tracer.start_span(
                op,
                kind=SpanKind.CLIENT,
                attributes={
                    "db.system": dialect,
                    "db.statement": statement[:STATEMENT_MAX_CHARS],
                },
            )

        @event.listens_for(engine.sync_engine, "after_cursor_execute")
        def _after(_conn, _cursor, _statement, _params, context, _many):
            sp = getattr(context, "_chatmem_span", None)
            if sp is not None:
                sp.end()
                context._chatmem_span = None

        @event.listens_for(engine.sync_engine, "handle_error")
        def _error(ctx):
            sp = getattr(ctx.execution_context, "_chatmem_span", None)
            if sp is not None:
                sp.record_exception(ctx.original_exception)
                sp.set_status(Status(StatusCode.ERROR, type(ctx.original_exception).__name__))
                sp.end()
                ctx.execution_context._chatmem_span = None

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()


def _attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


def current_span():
    return trace.get_current_span()

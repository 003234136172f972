"""Structured logs: one JSON object per line (or readable text), the request id on every line.

Why it exists: an operator greps and ships logs by field (``request_id``, ``conversation_id``,
``model``), not by parsing English. The code logs through the standard library as before
(``log.info("turn finished", extra={...})``); ``configure`` installs one handler whose
structlog ``ProcessorFormatter`` renders every record — chatmem's, uvicorn's, SQLAlchemy's — as
JSON with the timestamp, level, logger, message, the record's ``extra`` fields and the ids bound
to the current context (``bind`` / ``unbind``: the request middleware binds the request id, so a
turn started by a request logs it too).

Tracebacks are logged without the frames' local variables (structlog and Rich show them by
default): locals hold message text, prompts and the settings object with provider API keys, none
of which belongs in a log line.

``configure`` touches the process's logging and is called by the CLI commands that run servers
(``serve``, ``worker``) — never at import time, never by ``create_app`` (tests build many apps).
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Mapping
from typing import Any

import structlog
from structlog.contextvars import bind_contextvars, merge_contextvars, reset_contextvars
from structlog.stdlib import _LOG_RECORD_KEYS

LEVELS = ("debug", "info", "warning", "error", "critical")
FORMATS = ("auto", "json", "text")
#: the logger of the one-line-per-request and one-line-per-turn records
HTTP_LOGGER = "chatmem.http"
TURN_LOGGER = "chatmem.turns"


#: record attributes that are not fields of the line: uvicorn's ``color_message`` is its message
#: template again with ANSI colour codes, for its own console formatter
DROPPED_EXTRAS = frozenset({"color_message"})


def _drop_extras(_logger: Any, _method: str, event_dict: Any) -> Any:
    for key in DROPPED_EXTRAS:
        event_dict.pop(key, None)
    return event_dict


def _pre_chain() -> list[Any]:
    return [
        merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(),
        _drop_extras,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
    ]


def formatter(fmt: str) -> logging.Formatter:
    """The formatter for ``fmt`` (json | text; auto = json unless stderr is a terminal)."""
    if fmt == "auto":
        fmt = "text" if sys.stderr.isatty() else "json"
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False, default=str)
        no_locals = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        tail: list[Any] = [structlog.processors.ExceptionRenderer(no_locals)]
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
        tail = []
    cls = JsonFormatter if fmt == "json" else structlog.stdlib.ProcessorFormatter
    made = cls(
        foreign_pre_chain=_pre_chain(),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *tail,
            structlog.processors.EventRenamer("msg"),
            renderer,
        ],
    )
    if isinstance(made, JsonFormatter):
        made.inline_chain()  # the chain above, whose steps it knows
    return made


class JsonFormatter(structlog.stdlib.ProcessorFormatter):
    """structlog's ``ProcessorFormatter`` with its own steps run directly for a plain stdlib
    record — the request and turn lines and nearly every other record.

    ``ProcessorFormatter.format`` first copies the record (so that other handlers see it
    unchanged), then runs the processors on the copy and hands their string to
    ``logging.Formatter.format``. For a ``LogRecord`` without an exception or stack to render
    and without structlog's own attributes, the processors only *read* the record, the copy's
    ``args``/``exc_*``/``stack_info`` resets change nothing they read, and the base formatter
    returns the rendered string unchanged — so running the same processors on the record itself
    gives the same line, without the copy (a second ``LogRecord``, ~10 % of a request's log
    cost). Anything else takes structlog's path. ``tests/test_log_format.py`` holds the two
    outputs byte for byte.

    With ``formatter("json")``'s own chain (``inline_chain``) the steps run inline: the same
    dictionary operations each processor does, in their order (the context's ``structlog_``
    variables, level, logger name, the record's extra fields but ``DROPPED_EXTRAS``, the
    timestamp, the meta keys removed, ``event`` renamed ``msg``) and one prebuilt
    ``JSONEncoder(default=str)``, which is what ``json.dumps(..., default=str)`` builds per
    call — without nine processor calls and an encoder per line (~10 → ~7 µs a line in a loop,
    the request and turn lines three times a turn). A bound ``exc_info`` variable leaves the
    inline path for the processors.
    """

    _stamp: Any = None
    _encode: Any = None

    def inline_chain(self) -> None:
        """Run ``formatter("json")``'s chain inline (only that chain: its steps are known)."""
        stamps = [
            p
            for p in self.foreign_pre_chain or ()
            if isinstance(p, structlog.processors.TimeStamper)
        ]
        self._stamp = stamps[0]
        self._encode = json.JSONEncoder(default=str).encode

    def format(self, record: logging.LogRecord) -> str:
        d = record.__dict__
        if (
            type(record) is not logging.LogRecord
            or not self.use_get_message
            or self.pass_foreign_args
            or record.exc_info
            or record.stack_info
            or "_logger" in d
            or "_name" in d
        ):
            return super().format(record)
        method = record.levelname.lower()
        ed: Any = {"event": record.getMessage(), "_record": record, "_from_structlog": False}
        if self._stamp is None:
            for proc in self.foreign_pre_chain or ():
                ed = proc(None, method, ed)
            return self._processors(method, ed)
        ctx = contextvars.copy_context()  # merge_contextvars
        for var in ctx:
            name = var.name
            if name.startswith("structlog_") and ctx[var] is not Ellipsis:
                ed.setdefault(name[10:], ctx[var])
        # add_log_level (its method-name mapping), add_logger_name, ExtraAdder, TimeStamper
        ed["level"] = (
            "warning" if method == "warn" else "error" if method == "exception" else method
        )
        ed["logger"] = record.name
        for key, value in d.items():
            if key not in _LOG_RECORD_KEYS:
                ed[key] = value
        for key in DROPPED_EXTRAS:  # _drop_extras
            ed.pop(key, None)
        ed = self._stamp(None, method, ed)
        if "exc_info" in ed:  # ExceptionRenderer's input: structlog renders it
            return self._processors(method, ed)
        del ed["_record"]  # remove_processors_meta
        del ed["_from_structlog"]
        ed["msg"] = ed.pop("event")  # EventRenamer("msg")
        return self._encode(ed)  # JSONRenderer(sort_keys=False, default=str)

    def _processors(self, method: str, ed: Any) -> Any:
        for proc in self.processors:
            ed = proc(None, method, ed)
        return ed


def configure(level: str = "info", fmt: str = "auto", stream: Any = None) -> None:
    """Route every logger of the process through one handler on stderr (idempotent)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.set_name("chatmem")
    root = logging.getLogger()
    for h in list(root.handlers):
        if h.get_name() == "chatmem":
            root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # uvicorn's own loggers propagate to the root (chatmem serve passes log_config=None); its
    # access log is off: the request middleware writes one richer line per request instead
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def bind(**values: Any) -> Mapping:
    """Attach ``values`` to every record logged in this context; returns tokens for ``unbind``."""
    return bind_contextvars(**values)


def unbind(tokens: Mapping) -> None:
    reset_contextvars(**tokens)

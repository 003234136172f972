"""observability/logs.JsonFormatter: every record renders byte for byte as structlog's
ProcessorFormatter renders it (its direct path skips only the record copy), and the record
other handlers see is left as it was."""

from __future__ import annotations

import datetime
import logging
import sys

import pytest
import structlog

from chatmem.observability import logs


def frozen(fmt: logging.Formatter) -> logging.Formatter:
    """``fmt`` with its timestamp fixed (both paths share the pre-chain's stamper)."""
    for proc in fmt.foreign_pre_chain:  # type: ignore[attr-defined]
        if isinstance(proc, structlog.processors.TimeStamper):
            proc._stamper = lambda ed: {**ed, "ts": "2026-12-03T10:00:00.123456Z"}
    return fmt


def record(msg="request", args=(), level=logging.INFO, name="chatmem.http", **extra):
    log = logging.getLogger(name)
    return log.makeRecord(name, level, __file__, 1, msg, args, None, extra=extra or None)


def exc_record() -> logging.LogRecord:
    try:
        raise ValueError("boom")
    except ValueError:
        info = sys.exc_info()
    return logging.getLogger("x").makeRecord("x", logging.ERROR, __file__, 1, "m", (), info)


REQUEST = {
    "method": "POST",
    "route": "/api/conversations/{cid}/messages",
    "path": "/api/conversations/c_1/messages",
    "status": 200,
    "duration_ms": 3.21,
    "ttfb_ms": 1.2,
    "client": "127.0.0.1",
}

RECORDS = [
    lambda: record(**REQUEST),
    lambda: record("turn finished", name="chatmem.turns", model="m", tokens=40, ok=True),
    lambda: record("unhandled error on %s %s", ("GET", "/x"), logging.ERROR),
    lambda: record("%d%% done", (50,), logging.WARNING),
    lambda: record({"a": 1}),  # a non-str message
    lambda: record('ü ✓ \u2028 "q"', when=datetime.date(2026, 1, 2), raw=b"\x00", obj=object),
    lambda: record("shadowing", event="e", level="l", logger="g", request_id="r", msg2="x"),
    lambda: record("meta keys", _record="r", _from_structlog=True),
    lambda: record("custom level", level=5),
    lambda: record(
        "Uvicorn running on %s", ("x",), name="uvicorn.error", color_message="\x1b[1m%s"
    ),
    lambda: record("debug", level=logging.DEBUG, name="sqlalchemy.engine"),
    exc_record,
]


@pytest.mark.parametrize("make", RECORDS)
@pytest.mark.parametrize(
    "bound",
    [
        {},
        {"request_id": "req_1", "conversation_id": "c_2"},
        {"event": "bound", "level": "bound", "logger": "bound", "ts": "bound", "msg": "bound"},
        {"exc_info": False},  # ExceptionRenderer's key: the inline path hands it to structlog
    ],
)
def test_same_line_as_structlog(make, bound):
    fmt = frozen(logs.formatter("json"))
    assert isinstance(fmt, logs.JsonFormatter)
    assert fmt._stamp is not None  # the chain runs inline
    tokens = logs.bind(**bound)
    try:
        rec = make()
        before = dict(rec.__dict__)
        expected = structlog.stdlib.ProcessorFormatter.format(fmt, make())
        assert fmt.format(rec) == expected
        assert rec.__dict__ == before  # other handlers see the record unchanged
    finally:
        logs.unbind(tokens)


def test_a_record_formatted_before_keeps_its_extra_fields():
    """A record another handler formatted first carries ``message``: structlog adds it as an
    extra field, and so does the direct path."""
    fmt = frozen(logs.formatter("json"))
    rec = record(**REQUEST)
    logging.Formatter().format(rec)
    copy = logging.makeLogRecord(rec.__dict__)
    assert fmt.format(rec) == structlog.stdlib.ProcessorFormatter.format(fmt, copy)
    assert '"message": "request"' in fmt.format(rec)


def test_text_format_is_structlogs():
    assert type(logs.formatter("text")) is structlog.stdlib.ProcessorFormatter


def test_a_json_formatter_of_another_chain_runs_its_processors():
    """Only ``formatter("json")``'s chain is run inline; a JsonFormatter built with other
    processors runs them (here: sorted keys)."""
    fmt = logs.JsonFormatter(
        foreign_pre_chain=[structlog.stdlib.add_log_level],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.JSONRenderer(sort_keys=True),
        ],
    )
    assert fmt.format(record("x")) == '{"event": "x", "level": "info"}'


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_uvicorns_coloured_copy_of_its_message_is_not_a_field(fmt):
    """uvicorn logs its message template a second time, with ANSI colour codes, as
    ``color_message`` (for its own console formatter): neither format carries it."""
    line = logs.formatter(fmt).format(
        record("Uvicorn running on %s", ("x",), name="uvicorn.error", color_message="\x1b[1m%s")
    )
    assert "Uvicorn running on x" in line
    assert "color_message" not in line and "\x1b" not in line and "\\u001b" not in line

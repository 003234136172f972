"""The SSE wire format of the native API (pure): ``id: <seq>``, ``event: <type>``, JSON ``data``.

Frames whose event has no sequence number (``snapshot`` and the ``done`` that follows it when a
message's log has been pruned) carry no ``id`` line, so a client's Last-Event-ID stays meaningful.
"""

from __future__ import annotations

import json

PING = ": ping\n\n"
TERMINAL = ("done", "error")
#: ``json.dumps(data, ensure_ascii=False, separators=(",", ":"))`` without building this encoder
#: for every event (what ``dumps`` does when given any argument)
_DATA = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def frame(event: dict) -> str:
    data = _DATA(event["data"])
    head = f"id: {event['seq']}\n" if event.get("seq") is not None else ""
    return f"{head}event: {event['type']}\ndata: {data}\n\n"


def frames(events: list[dict]) -> str:
    return "".join(frame(e) for e in events)


def ends_stream(events: list[dict]) -> bool:
    """Whether these are a stream's last events: a follower stops after a terminal event."""
    return bool(events) and events[-1]["type"] in TERMINAL


def parse(text: str) -> list[dict]:
    """Parse an SSE body into ``{"seq", "type", "data"}`` dicts (comments skipped); for clients/tests."""
    out = []
    for chunk in text.replace("\r\n", "\n").split("\n\n"):
        ev: dict = {"seq": None, "type": "message", "data": None}
        lines = [ln for ln in chunk.split("\n") if ln and not ln.startswith(":")]
        if not lines:
            continue
        data = []
        for ln in lines:
            key, _, value = ln.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "id":
                ev["seq"] = int(value)
            elif key == "event":
                ev["type"] = value
            elif key == "data":
                data.append(value)
        ev["data"] = json.loads("\n".join(data)) if data else None
        out.append(ev)
    return out

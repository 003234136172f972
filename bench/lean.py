"""A lean HTTP/1.1 client for the benchmarks that measure the server's own cost.

Why it exists: on a two-core box the load generator shares the cores with the server it
measures. httpx costs the client ~3–4.5 ms of CPU per demo turn — about as much as the server's
whole turn — and that work lands on the same cores (and, on PostgreSQL, beside the database's own
backend), so the server's CPU per turn reads 5–15 % higher under httpx than under a client that
does next to nothing (``bench/turn_cost.py`` prints both). ``LeanClient`` keeps one keep-alive
connection on asyncio streams and parses no more than it needs: ~0.4–0.7 ms per turn.

It speaks what chatmem answers: ``Content-Length`` bodies for plain requests, and a chunked event
stream for a turn (``turn``: read to its terminal chunk, the last ``event:`` type returned).
"""

from __future__ import annotations

import asyncio
import json
import time

STREAM = "Accept: text/event-stream\r\n"


class LeanError(Exception):
    """The server answered a turn with an error status (the message says which)."""


#: what a failed lean exchange raises: the server refused, or the connection broke
ERRORS = (LeanError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError)


class LeanClient:
    """A minimal keep-alive HTTP/1.1 client: one connection, JSON bodies, ``Content-Length``
    responses (what chatmem answers a non-streaming request with)."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def _raw(self, method: str, path: str, body: dict | None, extra: str = "") -> bytes:
        data = json.dumps(body).encode() if body is not None else b""
        if data:
            extra += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{self.head}{extra}"
        return f"{head}\r\n".encode() + data

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        raw = self._raw(method, path, body)
        for attempt in (1, 2):  # the server may have closed an idle keep-alive connection
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            try:
                return await self._exchange(raw)
            except (asyncio.IncompleteReadError, ConnectionError):
                await self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _head(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        return status, dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        assert self.reader is not None and self.writer is not None
        self.writer.write(raw)
        status, fields = await self._head()
        body = await self.reader.readexactly(int(fields["content-length"]))
        if fields.get("connection") == "close":
            await self.close()
        return status, body

    async def turn(self, content: str = "benchmark") -> tuple[float, str | None, float | None]:
        """One demo turn in a new conversation, as ``stream.turn`` runs it with httpx: POST
        /api/conversations, then POST …/messages read as an event stream to its end. Returns
        (when the message was sent, the stream's last event type — ``done`` for a turn that
        finished —, when the first ``text_delta`` arrived or None), ``time.perf_counter`` times.
        A refused turn raises ``LeanError`` with its status and body."""
        status, made = await self.request("POST", "/api/conversations", {})
        if status != 201:
            raise LeanError(f"http {status}: {made[:200]!r}")
        cid = json.loads(made)["id"]
        assert self.reader is not None and self.writer is not None  # (request connected)
        path = f"/api/conversations/{cid}/messages"
        t0 = time.perf_counter()
        self.writer.write(self._raw("POST", path, {"content": content}, STREAM))
        status, fields = await self._head()
        if fields.get("transfer-encoding") != "chunked":  # an error answer: its JSON body
            body = await self.reader.readexactly(int(fields.get("content-length", 0)))
            raise LeanError(f"http {status}: {body[:200]!r}")
        chunks, first = [], None
        while size := int((await self.reader.readuntil(b"\r\n"))[:-2], 16):
            chunks.append((await self.reader.readexactly(size + 2))[:-2])
            if first is None and b"event: text_delta" in chunks[-1]:
                first = time.perf_counter()
        await self.reader.readexactly(2)  # the last chunk's CRLF
        events = b"".join(chunks).split(b"\nevent: ")
        last = events[-1].split(b"\n", 1)[0].decode() if len(events) > 1 else None
        return t0, last, first

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

"""The HTTP side of a pending fork: a request that reached one is answered again once it is copied.

Why it exists: a read of a fork whose copy has not run yet (``forks.py``) cannot copy it in its
own read transaction (SQLite's snapshot would not see the copy, and a read holds no write lock),
so ``store.get_conversation`` raises ``forks.ForkPending`` — before the request changed anything:
it is a read. Its answer (a 409 carrying the fork's id in ``X-Chatmem-Fork-Pending``) never
leaves the server: this middleware drops it, copies the fork (``forks.settle``: it waits for a
copy already running) and runs the request again with the body it had read. Clients see one
answer, a little later (the copy of 10,000 messages takes 0.2–0.9 s), and nothing of the fork's
pending state. Twice at most; a third pending answer goes out as it is (a 409 to retry), as
does one to a request of more than ``KEEP`` bytes (``_Heard``).

The cost for every other request: two wrappers and a header scan of the response's start.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..db.engine import Database
from . import forks

HEADER = b"x-chatmem-fork-pending"
ATTEMPTS = 3
KEEP = 1 << 20  # bytes of request body kept to ask again (a read's body is small)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class ForkWait:
    def __init__(self, app, db_of: Callable[[], Database]) -> None:
        self.app = app
        self.db_of = db_of

    async def __call__(self, scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        heard = _Heard(receive)
        listen: Receive = heard.receive
        for attempt in range(1, ATTEMPTS + 1):
            answer = _Answer(send, heard, last=attempt == ATTEMPTS)
            await self.app(scope, listen, answer.send)
            if answer.pending is None:
                return
            await forks.settle(self.db_of(), answer.pending)
            listen = _replay(list(heard.messages), heard.receive)


class _Heard:
    """The request's messages as the app reads them, kept to be read again — up to ``KEEP``
    bytes of body: a bigger request (an upload) is not kept (its chunks are not held for the
    request's life) and not asked again: a pending fork's 409 goes out as it is."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self.messages: list[Message] = []
        self.size = 0
        self.dropped = False

    async def receive(self) -> Message:
        message = await self._receive()
        if not self.dropped:
            self.size += len(message.get("body", b""))
            if self.size > KEEP:
                self.dropped, self.messages = True, []
            else:
                self.messages.append(message)
        return message


class _Answer:
    """One attempt's ``send``: passes the answer on, unless it is a pending fork's 409 that can be
    asked again (then it keeps the fork's id in ``pending`` and drops the answer)."""

    def __init__(self, send: Send, heard: _Heard, *, last: bool) -> None:
        self._send = send
        self._heard = heard
        self._last = last
        self.pending: str | None = None

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not (self._last or self._heard.dropped):
            for name, value in message.get("headers", ()):
                if name == HEADER:
                    self.pending = value.decode("latin-1")
        if self.pending is None:
            await self._send(message)


def _replay(messages: list[Message], then: Receive) -> Receive:
    """A ``receive`` that gives the request's messages already read again, then reads on."""

    async def receive() -> Message:
        return messages.pop(0) if messages else await then()

    return receive

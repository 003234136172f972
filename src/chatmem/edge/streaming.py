"""A streaming response that notices a client's disconnect without a task group per response.

Why it exists: under an ASGI server that announces spec 2.3 (uvicorn does), Starlette's
``StreamingResponse`` runs each stream inside an AnyIO task group — one task writing the body,
the request's own task waiting for ``http.disconnect`` — so that a client that goes away while
the stream is idle is noticed at once, not at the next write. The group, its cancel scope and the
spawned task cost ~65 µs of CPU per response, paid by every turn's event stream.

``DisconnectAwareStream`` keeps that promise with plain asyncio: the body is written by the
request's own task and one small watcher task waits for ``http.disconnect``; on a disconnect it
cancels the writer exactly once (``Task.cancel``, which ``asyncio.timeout`` and the other
cancel-counting code inside the stream tell apart from their own), and the response returns
normally, as Starlette's does. An error raised by ``receive`` ends the stream and is raised, as
the task group raised it. A cancellation from outside (server shutdown) still propagates. Under a
spec 2.4 server, and for websockets, Starlette's own call runs unchanged.

A body iterator that knows a chunk is its last (an event stream's terminal event) yields it as
``LastChunk``: it is sent with ``more_body: False`` — the data and the end of the response in one
``send`` (one write by the server) instead of two, so the client also gets the end at once — and
the iterator is closed. Every other chunk is sent as Starlette sends it; the body's bytes are the
same either way.
"""

from __future__ import annotations

import asyncio

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

#: the spec versions whose servers report a disconnect only through ``receive``
_WATCHED = frozenset({"2.0", "2.1", "2.2", "2.3"})


class LastChunk(str):
    """The last chunk of a body, text like any other (code that joins a body's chunks sees a
    ``str``): the response ends with it (see the module's docstring)."""

    __slots__ = ()


class _Watch:
    """The watcher's outcome: whether it cancelled the writer, and why."""

    __slots__ = ("cancelled", "error")

    def __init__(self) -> None:
        self.cancelled = False
        self.error: Exception | None = None


async def _watch(receive: Receive, writer: asyncio.Task, out: _Watch) -> None:
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    except Exception as exc:  # receive failed: end the stream and raise it there
        out.error = exc
    out.cancelled = True
    writer.cancel()


class DisconnectAwareStream(StreamingResponse):
    """``StreamingResponse`` with the disconnect watched by one task instead of a task group."""

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        body = self.body_iterator
        async for chunk in body:
            last = isinstance(chunk, LastChunk)
            data = chunk if isinstance(chunk, bytes | memoryview) else chunk.encode(self.charset)
            await send({"type": "http.response.body", "body": data, "more_body": not last})
            if last:
                aclose = getattr(body, "aclose", None)
                if aclose is not None:
                    await aclose()
                return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = scope.get("asgi", {}).get("spec_version", "2.0")
        writer = asyncio.current_task()
        if scope["type"] != "http" or spec not in _WATCHED or writer is None:
            await super().__call__(scope, receive, send)
            return
        out = _Watch()
        watcher = asyncio.create_task(_watch(receive, writer, out))
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            # ours alone (no other cancel pending): the client left, or receive failed
            if not out.cancelled or writer.uncancel() > 0:
                raise
            if out.error is not None:
                raise out.error from None
        else:
            if out.cancelled:  # the stream swallowed our cancel and ended: forget it
                writer.uncancel()
        finally:
            watcher.cancel()
        if self.background is not None:
            await self.background()

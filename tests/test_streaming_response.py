"""edge/streaming.DisconnectAwareStream: the event-stream response without a task group per
response. It must send exactly what Starlette's StreamingResponse sends, end an idle stream as
soon as the client disconnects (closing the body generator, returning normally), let an outside
cancellation through, raise an error from ``receive``, and not be confused with the
``asyncio.timeout`` the live log waits under (the SSE keep-alive). A ``LastChunk`` (an event
stream's terminal batch) goes out with the end of the response in one send."""

from __future__ import annotations

import asyncio

import pytest
from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse

from chatmem.edge.streaming import DisconnectAwareStream, LastChunk
from chatmem.generation.sse import ends_stream

FRAMES = ["id: 1\nevent: a\ndata: {}\n\n", ": ping\n\n", "id: 2\nevent: done\ndata: {}\n\n"]


def scope(spec: str | None = "2.3") -> dict:
    asgi = {"version": "3.0"} if spec is None else {"version": "3.0", "spec_version": spec}
    return {"type": "http", "asgi": asgi, "method": "GET", "path": "/", "headers": []}


class Peer:
    """The server side of one request: what was sent, and a disconnect to trigger."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.gone = asyncio.Event()
        self.receives = 0

    async def receive(self) -> dict:
        self.receives += 1
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)


async def frames(idle: asyncio.Event | None = None, closed: list | None = None):
    try:
        for f in FRAMES:
            await asyncio.sleep(0)
            yield f
        if idle is not None:
            await idle.wait()  # an idle stream: nothing until the client leaves
    finally:
        if closed is not None:
            closed.append(True)


@pytest.mark.parametrize("spec", ["2.3", "2.4", None])
async def test_sends_what_starlette_sends(spec):
    ours, theirs = Peer(), Peer()
    headers = {"Cache-Control": "no-cache"}
    await DisconnectAwareStream(frames(), media_type="text/event-stream", headers=headers)(
        scope(spec), ours.receive, ours.send
    )
    await StreamingResponse(frames(), media_type="text/event-stream", headers=headers)(
        scope(spec), theirs.receive, theirs.send
    )
    assert ours.sent == theirs.sent
    assert ours.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_disconnect_ends_an_idle_stream_at_once():
    peer, closed, ran = Peer(), [], []
    response = DisconnectAwareStream(
        frames(asyncio.Event(), closed), background=BackgroundTask(lambda: ran.append(1))
    )
    task = asyncio.create_task(response(scope(), peer.receive, peer.send))
    while len(peer.sent) < 1 + len(FRAMES):
        await asyncio.sleep(0)
    peer.gone.set()
    await asyncio.wait_for(task, 5)  # returns normally, as Starlette's task group did
    assert closed == [True] and ran == [1]
    assert task.cancelling() == 0  # no cancel request left on the request's task
    assert all(m.get("more_body", False) for m in peer.sent[1:])  # never completed


async def test_outside_cancellation_propagates():
    peer, closed = Peer(), []
    task = asyncio.create_task(
        DisconnectAwareStream(frames(asyncio.Event(), closed))(scope(), peer.receive, peer.send)
    )
    while len(peer.sent) < 1 + len(FRAMES):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == [True]


async def test_an_error_from_receive_is_raised():
    async def receive():
        raise OSError("receive failed")

    peer = Peer()
    with pytest.raises(OSError, match="receive failed"):
        await DisconnectAwareStream(frames(asyncio.Event()))(scope(), receive, peer.send)


async def test_the_watcher_ends_with_the_stream():
    peer = Peer()
    before = asyncio.all_tasks()
    await DisconnectAwareStream(frames())(scope(), peer.receive, peer.send)
    await asyncio.sleep(0)
    assert peer.receives == 1 and asyncio.all_tasks() == before


async def keepalive(gone: asyncio.Event, pings: list):
    """Like the live log's ``batches``: a ping whenever a short wait times out."""
    while True:
        try:
            async with asyncio.timeout(0.01):
                await gone.wait()
        except TimeoutError:
            pings.append(1)
            yield ": ping\n\n"


async def test_keepalive_timeouts_are_not_disconnects():
    peer, pings = Peer(), []
    task = asyncio.create_task(
        DisconnectAwareStream(keepalive(asyncio.Event(), pings))(scope(), peer.receive, peer.send)
    )
    while len(pings) < 3:  # timeouts inside the stream stay the stream's own
        await asyncio.sleep(0.005)
    assert not task.done()
    peer.gone.set()
    await asyncio.wait_for(task, 5)
    assert task.cancelling() == 0


@pytest.mark.parametrize("spec", ["2.3", "2.4"])
async def test_last_chunk_ends_the_response_in_the_same_send(spec):
    closed: list = []

    async def body():
        try:
            yield FRAMES[0]
            yield LastChunk(FRAMES[1] + FRAMES[2])
            yield "never sent"
        finally:
            closed.append(True)

    peer = Peer()
    await DisconnectAwareStream(body())(scope(spec), peer.receive, peer.send)
    assert [(m.get("body"), m.get("more_body")) for m in peer.sent[1:]] == [
        (FRAMES[0].encode(), True),
        ((FRAMES[1] + FRAMES[2]).encode(), False),
    ]
    assert closed == [True]


def test_only_a_terminal_batch_ends_the_stream():
    assert ends_stream([{"seq": 1, "type": "text"}, {"seq": 2, "type": "done"}])
    assert ends_stream([{"seq": 3, "type": "error"}])
    assert not ends_stream([{"seq": 2, "type": "done"}, {"seq": 3, "type": "text"}])
    assert not ends_stream([])

"""The HTTP layer of a pending fork (conversations/forkwait.py), with a stand-in app: the 409 of
a fork still being copied never leaves, the fork is copied, and the request is answered again with
the body it had read; an upload's body is not kept, so its 409 goes out as it is."""

from __future__ import annotations

import httpx
import pytest

from chatmem.conversations import forks, forkwait


class _App:
    """Answers 409 + the pending header while ``pending`` holds the fork id, else echoes the body."""

    def __init__(self) -> None:
        self.pending: str | None = "c_fork"
        self.calls = 0

    async def __call__(self, scope, receive, send) -> None:
        self.calls += 1
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if self.pending:
            headers = [(b"content-type", b"application/json"), (forkwait.HEADER, b"c_fork")]
            await send({"type": "http.response.start", "status": 409, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"error": "fork_copying"}'})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def app(monkeypatch):
    inner = _App()
    settled: list[str] = []

    async def settle(_db, cid: str) -> bool:
        settled.append(cid)
        inner.pending = None
        return True

    monkeypatch.setattr(forks, "settle", settle)
    return inner, settled, forkwait.ForkWait(inner, db_of=lambda: None)


async def _post(asgi, body: bytes) -> httpx.Response:
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.post("/x", content=body)


async def test_a_pending_answer_is_dropped_and_the_request_asked_again(app):
    inner, settled, asgi = app
    r = await _post(asgi, b'{"q": "the same body twice"}')
    assert r.status_code == 200 and r.content == b'{"q": "the same body twice"}'
    assert settled == ["c_fork"] and inner.calls == 2


async def test_an_upload_is_not_kept_and_its_pending_answer_goes_out(app):
    inner, settled, asgi = app
    r = await _post(asgi, b"x" * (forkwait.KEEP + 1))
    assert r.status_code == 409 and r.headers[forkwait.HEADER.decode()] == "c_fork"
    assert settled == [] and inner.calls == 1


async def test_a_fork_that_stays_pending_answers_409_after_the_third_try(app, monkeypatch):
    inner, settled, asgi = app

    async def settle_nothing(_db, cid: str) -> bool:
        settled.append(cid)
        return False

    monkeypatch.setattr(forks, "settle", settle_nothing)
    r = await _post(asgi, b"{}")
    assert r.status_code == 409 and inner.calls == forkwait.ATTEMPTS
    assert settled == ["c_fork"] * (forkwait.ATTEMPTS - 1)

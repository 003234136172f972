"""POST /rpc/chat/inbox: the seed-000 chat turn through chatmem's generation path, on both DBs."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import asynccontextmanager

import httpx
from sqlalchemy import func, select

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.compat.contracts import AgentConversationResponse
from chatmem.db import schema as t
from chatmem.generation.sse import parse
from tests.conftest import make_settings
from tests.fakes import FailingProvider, GatedProvider

from .test_compat_support import data_of, error_of, insert_agent

MODELS = [
    {"id": "failfirst", "provider": "failfirst"},
    {"id": "faillate", "provider": "faillate"},
    {"id": "slow", "provider": "gated"},
]


@asynccontextmanager
async def chat_app(db_url: str):
    application = create_app(make_settings(db_url, models=MODELS, default_model="demo"))
    async with application.router.lifespan_context(application):
        reg = application.state.runtime.providers
        reg.register("failfirst", FailingProvider("failfirst", (), "upstream down"))
        reg.register("faillate", FailingProvider("faillate", ("半句", "话"), "connection reset"))
        application.state.gated = GatedProvider()
        reg.register("gated", application.state.gated)
        yield application


@asynccontextmanager
async def user_client(application):
    user, key = await auth_service.create_user(
        application.state.runtime.db, f"u-{uuid.uuid4().hex[:8]}@example.com"
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://test",
        headers={"Authorization": f"Bearer {key}"},
    ) as c:
        c.user_id = user["id"]
        yield c


def persona(agent_id: str | None, **kw) -> dict:
    out = {
        "name": "Lin",
        "handle": "lin",
        "headline": "a friend",
        "lastActive": "刚刚",
        "status": "在线",
        "relationship": "朋友",
        "topic": "猫",
        "chemistry": "92",
        "chemistryLabel": "默契",
        "rhythm": "每天",
        "profileNote": "喜欢安静的聊天",
    }
    if agent_id is not None:
        out["id"] = agent_id
    out.update(kw)
    return out


def ui(role: str, text: str, mid: str | None = None) -> dict:
    out = {"role": role, "parts": [{"type": "text", "text": text}]}
    if mid:
        out["id"] = mid
    return out


def chat_body(agent_id, text="你好", history=(), **kw) -> dict:
    return {
        "messages": [*history, ui("user", text, "ui-1")],
        "conversation": persona(agent_id),
        **kw,
    }


async def settle(application) -> None:
    """Wait for running turns to end, then for the after-turn jobs (memory extraction,
    compaction, title) to drain, so the next step starts from a quiet database."""
    J, M = t.jobs.c, t.messages.c
    for _ in range(3000):  # a guard against a stuck turn or job, not a timing assertion
        async with application.state.runtime.db.read() as c:
            busy = (await c.execute(select(M.id).where(M.status == "streaming"))).all()
            busy += (
                await c.execute(
                    select(J.kind, J.status, J.last_error).where(
                        J.status.in_(["queued", "running"])
                    )
                )
            ).all()
        if not busy:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"turns or jobs never finished: {busy}")


async def count(application, table, **where) -> int:
    q = select(func.count()).select_from(table)
    for k, v in where.items():
        q = q.where(table.c[k] == v)
    async with application.state.runtime.db.read() as c:
        return (await c.execute(q)).scalar_one()


async def agent_row(application, aid):
    async with application.state.runtime.db.read() as c:
        return (await c.execute(select(t.agents).where(t.agents.c.id == aid))).one()


async def test_turn_streams_plain_text_and_persists(db_url):
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id, opening_message="嗨，我是 Lin")
        body = chat_body(
            aid, "我喜欢猫，以后记住", history=[ui("assistant", "嗨，我是 Lin", "open")]
        )
        r = await c.post("/rpc/chat/inbox", json=body)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "text/plain; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache, no-transform"
        assert r.headers["x-accel-buffering"] == "no"
        cid, uid, mid = (
            r.headers["x-conversation-id"],
            r.headers["x-user-message-id"],
            r.headers["x-assistant-message-id"],
        )
        assert r.text.strip()
        await settle(application)

        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        assert conv.conversationId == cid and conv.messageCount == 2
        assert [(m.id, m.role, m.status) for m in conv.messages] == [
            (uid, "user", "completed"),
            (mid, "assistant", "completed"),
        ]
        assert (
            conv.messages[0].content == "我喜欢猫，以后记住"
        )  # the opening greeting is not stored
        assert conv.messages[1].content == r.text
        async with application.state.runtime.db.read() as cx:
            crow = (
                await cx.execute(select(t.conversations).where(t.conversations.c.id == cid))
            ).one()
            urow = (await cx.execute(select(t.messages).where(t.messages.c.id == uid))).one()
        assert crow.is_agent_default == 1 and crow.title == "Lin"
        assert crow.last_message_at == conv.messages[1].createdAtMs
        assert urow.metadata["client_message_id"] == "ui-1"
        agent = await agent_row(application, aid)
        assert agent.last_assistant_message == r.text[:500]
        assert agent.last_assistant_message_at == conv.messages[1].createdAtMs

        # The same turn is resumable through the native stream endpoint.
        s = await c.get(
            f"/api/conversations/{cid}/messages/{mid}/stream", headers={"Last-Event-ID": "0"}
        )
        events = parse(s.text)
        assert events[-1]["type"] == "done"
        assert "".join(e["data"]["text"] for e in events if e["type"] == "text_delta") == r.text

        # A second turn continues the same conversation; the client's old messages are ignored.
        body2 = chat_body(
            aid,
            "再说一句",
            history=[ui("user", "我喜欢猫，以后记住"), ui("assistant", r.text)],
            conversationId=cid,
        )
        r2 = await c.post("/rpc/chat/inbox", json=body2)
        assert r2.status_code == 200 and r2.headers["x-conversation-id"] == cid
        await settle(application)
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        assert conv.messageCount == 4 and len(conv.messages) == 4
        assert [m.content for m in conv.messages][2:] == ["再说一句", r2.text]
        assert (await agent_row(application, aid)).last_assistant_message == r2.text[:500]
        assert await count(application, t.conversations, agent_id=aid) == 1


async def test_failure_before_text_is_chat_stream_failed(db_url):
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id)
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        r = await c.patch(f"/api/conversations/{conv.conversationId}", json={"model": "failfirst"})
        assert r.status_code == 200, r.text
        env = error_of(
            await c.post("/rpc/chat/inbox", json=chat_body(aid, "在吗")), 500, "Chat stream failed"
        )
        assert env.error.code == "chat_stream_failed"
        assert env.error.details["reason"] == "upstream_error"
        await settle(application)
        got = data_of(await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse)
        assert [(m.role, m.status) for m in got.messages] == [
            ("user", "completed"),
            ("assistant", "failed"),
        ]
        assert got.messages[1].id == env.error.details["messageId"]
        assert got.messageCount == 2
        assert (await agent_row(application, aid)).last_assistant_message is None


async def test_failure_mid_stream_keeps_partial_text_as_failed(db_url):
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id)
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        await c.patch(f"/api/conversations/{conv.conversationId}", json={"model": "faillate"})
        r = await c.post("/rpc/chat/inbox", json=chat_body(aid, "讲个故事"))
        assert r.status_code == 200 and r.text == "半句话"
        await settle(application)
        got = data_of(await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse)
        assert [(m.content, m.status) for m in got.messages] == [
            ("讲个故事", "completed"),
            ("半句话", "failed"),
        ]
        # No feedback on a failed answer.
        error_of(
            await c.post(
                f"/rpc/chat/inbox/{aid}/messages/{got.messages[1].id}/feedback",
                json={"rating": "positive"},
            ),
            404,
        )
        assert (await agent_row(application, aid)).last_assistant_message is None


async def test_bad_input_writes_nothing(db_url):
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id)
        many = [ui("user", f"m{i}") for i in range(21)]
        part = {"type": "text", "text": "x"}
        cases = [
            {"messages": [], "conversation": persona(aid)},
            {
                "messages": [{"role": "user", "parts": [{"type": "text"}]}],
                "conversation": persona(aid),
            },
            {"messages": [{"role": "tool", "parts": [part]}], "conversation": persona(aid)},
            chat_body(aid, conversationId=""),
            {"messages": [ui("user", "hi")]},
            {"messages": [ui("user", "hi")], "conversation": persona("")},
        ]
        for field, limit in (
            ("name", 120),
            ("handle", 120),
            ("headline", 200),
            ("lastActive", 80),
            ("status", 80),
            ("relationship", 120),
            ("topic", 120),
            ("chemistry", 80),
            ("chemistryLabel", 80),
            ("rhythm", 80),
            ("profileNote", 2000),
        ):
            cases.append(
                {
                    "messages": [ui("user", "hi")],
                    "conversation": persona(aid, **{field: "x" * (limit + 1)}),
                }
            )
            cases.append(
                {"messages": [ui("user", "hi")], "conversation": persona(aid, **{field: ""})}
            )
        for body in cases:
            env = error_of(await c.post("/rpc/chat/inbox", json=body), 400, "Invalid request")
            assert env.error.code == "validation_error" and env.error.details, body
        # Valid shape, but nothing to answer / no agent named.
        for body in (
            chat_body(None),
            {"messages": [ui("user", "hi"), ui("assistant", "yo")], "conversation": persona(aid)},
            chat_body(aid, "   "),
            {"messages": [{"role": "user", "parts": []}], "conversation": persona(aid)},
            {
                "messages": [{"role": "user", "parts": [{"type": "image", "url": "x"}]}],
                "conversation": persona(aid),
            },
            {"messages": [ui("system", "hi")], "conversation": persona(aid)},
        ):
            env = error_of(await c.post("/rpc/chat/inbox", json=body), 400)
            assert env.error.code == "validation_error"
        assert await count(application, t.conversations) == 0
        assert await count(application, t.messages) == 0
        # Beyond seed 000's 20 messages / 50 parts (useChat resends its whole history), and
        # full-length persona fields, are accepted.
        ok = {
            "messages": [*many, {"role": "user", "parts": [part] * 51}],
            "conversation": persona(aid, name="n" * 120, profileNote="p" * 2000),
        }
        r = await c.post("/rpc/chat/inbox", json=ok)
        assert r.status_code == 200, r.text
        await settle(application)
        assert await count(application, t.messages) == 2  # only the new turn


async def test_other_users_agent_and_conversation(db_url):
    async with (
        chat_app(db_url) as application,
        user_client(application) as a,
        user_client(application) as b,
    ):
        aid = await insert_agent(application, a.user_id)
        a_conv = data_of(
            await a.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        env = error_of(
            await b.post("/rpc/chat/inbox", json=chat_body(aid)), 404, "Agent is not available"
        )
        assert env.error.code == "agent_not_available"
        error_of(
            await b.post("/rpc/chat/inbox", json=chat_body("agt_nope")),
            404,
            "Agent is not available",
        )
        # b's own agent, but a's conversation id.
        b_aid = await insert_agent(application, b.user_id)
        error_of(
            await b.post(
                "/rpc/chat/inbox", json=chat_body(b_aid, conversationId=a_conv.conversationId)
            ),
            404,
        )
        # a's other agent with the first agent's conversation id.
        other = await insert_agent(application, a.user_id, name="Other")
        error_of(
            await a.post(
                "/rpc/chat/inbox", json=chat_body(other, conversationId=a_conv.conversationId)
            ),
            404,
        )
        assert await count(application, t.messages) == 0
        assert await count(application, t.conversations, user_id=b.user_id) == 0


async def test_concurrent_turns_keep_counters_right(db_url):
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id)
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        await c.patch(f"/api/conversations/{conv.conversationId}", json={"model": "slow"})
        first = asyncio.create_task(c.post("/rpc/chat/inbox", json=chat_body(aid, "一")))
        while await count(application, t.messages, status="streaming") == 0:
            await asyncio.sleep(0.01)
        # A second send while the first answer is still being written: refused, nothing written.
        env = error_of(await c.post("/rpc/chat/inbox", json=chat_body(aid, "二")), 409)
        assert env.error.code == "parent_streaming"
        application.state.gated.gate.set()
        r = await first
        assert r.status_code == 200 and r.text == "first second"
        # Turns on three agents at once (the per-user cap is 3): every counter exact.
        agents = [await insert_agent(application, c.user_id, name=f"A{i}") for i in range(3)]
        rs = await asyncio.gather(
            *[c.post("/rpc/chat/inbox", json=chat_body(x, "hi")) for x in agents]
        )
        assert all(r.status_code == 200 for r in rs), [r.text for r in rs]
        await settle(application)
        for x in [aid, *agents]:
            got = data_of(
                await c.get(f"/rpc/chat/inbox/{x}/conversation"), AgentConversationResponse
            )
            assert got.messageCount == len(got.messages) == 2
            async with application.state.runtime.db.read() as cx:
                crow = (
                    await cx.execute(
                        select(t.conversations).where(t.conversations.c.id == got.conversationId)
                    )
                ).one()
            assert crow.last_message_at == max(m.createdAtMs for m in got.messages)


async def test_turn_survives_the_client_leaving(db_url):
    """The reply stream is only a view: abandoning it mid-answer neither stops the turn nor the
    agent preview; the full answer is in the history afterwards."""
    from chatmem.auth.models import Principal
    from chatmem.compat import chat
    from chatmem.compat.contracts import InboxChatRequest

    async with chat_app(db_url) as application, user_client(application) as c:
        rt = application.state.runtime
        aid = await insert_agent(application, c.user_id)
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        await c.patch(f"/api/conversations/{conv.conversationId}", json={"model": "slow"})
        turn = await chat.start(
            rt,
            Principal(id=c.user_id, email="x@example.com"),
            InboxChatRequest.model_validate(chat_body(aid, "慢慢说")),
        )
        stream = chat.reply_text(turn)
        assert await stream.__anext__() == b"first"
        await stream.aclose()  # the tab is closed
        application.state.gated.gate.set()
        await settle(application)
        got = data_of(await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse)
        assert [(m.content, m.status) for m in got.messages] == [
            ("慢慢说", "completed"),
            ("first second", "completed"),
        ]
        assert (await agent_row(application, aid)).last_assistant_message == "first second"


def sdk_assistant(text: str, mid: str) -> dict:
    """What useChat stores for an answer (AI SDK 5+): a step-start part before the text."""
    return {
        "id": mid,
        "role": "assistant",
        "parts": [{"type": "step-start"}, {"type": "text", "text": text, "state": "done"}],
        "metadata": {"x": 1},
    }


async def test_ai_sdk_histories_any_parts_and_longer_than_20(db_url):
    """useChat resends its whole history with every part type it keeps: accepted, only the
    newest user message is new, nothing duplicated."""
    async with chat_app(db_url) as application, user_client(application) as c:
        aid = await insert_agent(application, c.user_id)
        history: list[dict] = []
        for i in range(12):  # 24 UI messages by the end: past seed 000's 20
            history.append(
                {
                    "id": f"u{i}",
                    "role": "user",
                    "parts": [
                        {"type": "file", "mediaType": "image/png", "url": "data:,"},
                        {"type": "text", "text": f"turn {i}"},
                        {"type": "data-weather", "data": {"c": 20}},
                    ],
                }
            )
            r = await c.post(
                "/rpc/chat/inbox",
                json={
                    "id": aid,
                    "messages": history,
                    "trigger": "submit-message",
                    "conversation": persona(aid),
                },
            )
            assert r.status_code == 200, r.text
            history.append(sdk_assistant(r.text, f"a{i}"))
        await settle(application)
        got = data_of(await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse)
        assert got.messageCount == 24 == len(got.messages)
        assert [m.content for m in got.messages if m.role == "user"] == [
            f"turn {i}" for i in range(12)
        ]
        tool_only = {
            "role": "assistant",
            "parts": [{"type": "tool-search", "toolCallId": "x", "state": "output-available"}],
        }
        r = await c.post(
            "/rpc/chat/inbox",
            json={"messages": [tool_only, ui("user", "and now?")], "conversation": persona(aid)},
        )
        assert r.status_code == 200, r.text


async def test_ai_sdk_resume_convention(db_url):
    """GET /rpc/chat/inbox/{chatId}/stream: the running reply from its start, else 204."""
    async with (
        chat_app(db_url) as application,
        user_client(application) as c,
        user_client(application) as other,
    ):
        aid = await insert_agent(application, c.user_id)
        # no conversation yet, and later nothing running: 204
        r = await c.get(f"/rpc/chat/inbox/{aid}/stream")
        assert r.status_code == 204 and r.content == b""
        conv = data_of(
            await c.get(f"/rpc/chat/inbox/{aid}/conversation"), AgentConversationResponse
        )
        assert (await c.get(f"/rpc/chat/inbox/{conv.conversationId}/stream")).status_code == 204
        await c.patch(f"/api/conversations/{conv.conversationId}", json={"model": "slow"})
        first = asyncio.create_task(c.post("/rpc/chat/inbox", json=chat_body(aid, "慢")))
        while await count(application, t.messages, status="streaming") == 0:
            await asyncio.sleep(0.01)
        # the tab reloads mid-answer: both chat ids resume the same reply from its beginning
        resumed = [
            asyncio.create_task(c.get(f"/rpc/chat/inbox/{x}/stream"))
            for x in (aid, conv.conversationId)
        ]
        await asyncio.sleep(0.1)
        application.state.gated.gate.set()
        for task in resumed:
            r = await task
            assert r.status_code == 200 and r.text == "first second"
            assert r.headers["content-type"].startswith("text/plain")
            assert r.headers["x-conversation-id"] == conv.conversationId
        assert (await first).text == "first second"
        await settle(application)
        assert (await c.get(f"/rpc/chat/inbox/{aid}/stream")).status_code == 204
        # someone else's agent or conversation, or an unknown id: 404 in the envelope
        for x in (aid, conv.conversationId, "nope"):
            r = await other.get(f"/rpc/chat/inbox/{x}/stream")
            assert r.status_code == 404 and r.json()["ok"] is False

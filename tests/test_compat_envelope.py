"""Every /rpc response is a seed-000 envelope: auth failures, unknown paths, wrong methods, bad JSON."""

from __future__ import annotations

from chatmem.compat.contracts import AgentConversationResponse

from .test_compat_support import data_of, error_of, insert_agent


async def test_unauthenticated_is_enveloped(anon):
    env = error_of(await anon.get("/rpc/chat/inbox/agt_x/conversation"), 401)
    assert env.error.code == "unauthorized"
    env = error_of(
        await anon.get(
            "/rpc/chat/inbox/agt_x/conversation", headers={"Authorization": "Bearer nope"}
        ),
        401,
    )
    assert env.ok is False


async def test_unknown_path_and_method(app, new_user):
    a = await new_user()
    error_of(await a.client.get("/rpc/nothing/here"), 404, "Not found")
    error_of(await a.client.get("/rpc"), 404)
    env = error_of(await a.client.delete("/rpc/chat/inbox/agt_x/conversation"), 405)
    assert env.error.code == "method_not_allowed"
    # Native paths keep the native error shape.
    r = await a.client.get("/api/nothing")
    assert r.status_code == 404 and "ok" not in r.json()


async def test_bad_json_is_enveloped(app, new_user):
    a = await new_user()
    r = await a.client.post(
        "/rpc/chat/inbox/agt_x/messages/m/feedback",
        content=b"{nope",
        headers={"content-type": "application/json"},
    )
    env = error_of(r, 400, "Invalid request")
    assert env.error.code == "validation_error"


async def test_request_id_is_echoed(app, new_user):
    a = await new_user()
    aid = await insert_agent(app, a.id)
    r = await a.client.get(
        f"/rpc/chat/inbox/{aid}/conversation", headers={"X-Request-ID": "trace-123"}
    )
    data_of(r, AgentConversationResponse)
    body = r.json()
    assert body["meta"]["requestId"] == "trace-123" and body["meta"]["timestamp"].endswith("Z")
    r = await a.client.get(
        f"/rpc/chat/inbox/{aid}/conversation", headers={"X-Request-ID": "bad id with spaces"}
    )
    assert r.json()["meta"]["requestId"].startswith("req_")
    r = await a.client.get("/rpc/nothing", headers={"X-Request-ID": "t-9"})
    assert error_of(r, 404).meta.requestId == "t-9"

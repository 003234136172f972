async def test_health(anon):
    r = await anon.get("/api/health")
    assert r.status_code == 200 and r.json()["ok"] is True


async def test_conversation_roundtrip(new_user):
    a = await new_user()
    r = await a.client.post("/api/conversations", json={"title": "hi"})
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    r = await a.client.post(
        f"/api/conversations/{cid}/messages", json={"content": "q", "generate": False}
    )
    assert r.status_code == 201, r.text
    r = await a.client.post(
        f"/api/conversations/{cid}/messages", json={"content": "a", "role": "assistant"}
    )
    assert r.status_code == 201, r.text
    r = await a.client.get(f"/api/conversations/{cid}/messages")
    assert [m["text"] for m in r.json()["items"]] == ["q", "a"]

"""Cross-feature behaviour of a native turn: the agent's reply preview and inline compaction."""

from __future__ import annotations

from .test_generation import client_for, running_app, stream


async def _finish(c, cid: str, content: str) -> tuple[str, list[dict]]:
    r = await c.post(f"/api/conversations/{cid}/messages", json={"content": content})
    assert r.status_code == 202, r.text
    mid = r.json()["assistant_message_id"]
    events = await stream(c, cid, mid)
    assert events[-1]["type"] == "done", events[-1]
    return mid, events


async def test_native_turn_updates_the_agents_reply_preview(db_url):
    async with running_app(db_url) as app, client_for(app) as c:
        agent = (await c.post("/api/agents", json={"name": "Mika", "handle": "mika"})).json()
        assert agent["last_assistant_message"] is None
        cid = (await c.post("/api/conversations", json={"agent_id": agent["id"]})).json()["id"]
        mid, _ = await _finish(c, cid, "How do tides work?")
        text = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()["text"]
        agent = (await c.get(f"/api/agents/{agent['id']}")).json()
        assert agent["last_assistant_message"] == text[:500] and text
        assert agent["last_assistant_message_at"] is not None


async def test_inline_compaction_runs_before_the_call_and_is_announced(db_url):
    async with running_app(db_url, demo_context_window=1024) as app, client_for(app) as c:
        cid = (await c.post("/api/conversations", json={})).json()["id"]
        filler = " ".join(["tide pools hold anemones, crabs and small fish"] * 6)
        for i in range(30):
            for role in ("user", "assistant"):
                r = await c.post(
                    f"/api/conversations/{cid}/messages",
                    json={"content": f"{role} {i}: {filler}", "role": role, "generate": False},
                )
                assert r.status_code == 201
        mid, events = await _finish(c, cid, "What did we say about crabs?")
        kinds = [e["type"] for e in events]
        assert "compaction" in kinds, kinds
        assert kinds.index("compaction") < kinds.index("text_delta")
        comp = next(e for e in events if e["type"] == "compaction")["data"]
        assert comp["mode"] == "inline" and comp["blocks_added"] >= 1
        conv = (await c.get(f"/api/conversations/{cid}")).json()
        assert conv["summary_blocks"], "the summary was stored"
        report = (await c.get(f"/api/conversations/{cid}/messages/{mid}")).json()["metadata"][
            "context"
        ]
        assert report["compaction"]["ran"] is True
        assert report["total_tokens"] <= 1024


async def test_edit_and_resend_of_the_first_message_starts_a_new_root(db_url):
    async with running_app(db_url) as app, client_for(app) as c:
        cid = (await c.post("/api/conversations", json={})).json()["id"]
        first_mid, _ = await _finish(c, cid, "Frist question")
        r = await c.post(
            f"/api/conversations/{cid}/messages", json={"content": "First question", "branch": True}
        )
        assert r.status_code == 202, r.text
        mid = r.json()["assistant_message_id"]
        assert (await stream(c, cid, mid))[-1]["type"] == "done"
        page = (await c.get(f"/api/conversations/{cid}/messages")).json()["items"]
        assert [m["role"] for m in page] == ["user", "assistant"]
        assert page[0]["parent_id"] is None and page[0]["text"] == "First question"
        assert page[0]["branch_count"] == 2 and page[0]["branch_index"] == 1

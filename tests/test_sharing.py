"""Conversation shares on SQLite and PostgreSQL: frozen redacted snapshots of the active path,
re-share/revoke, the public reader with its per-IP limit, clone, and isolation."""

from __future__ import annotations

import json

import httpx

from chatmem.db import schema as t
from chatmem.edge.ratelimit import Throttle
from chatmem.sharing import redact

from .social_support import assert_error, count_rows, insert_chain, new_conv, set_columns

FORBIDDEN = {
    "id",
    "parent_id",
    "conversation_id",
    "input_tokens",
    "output_tokens",
    "context_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost",
    "credits",
    "raw",
    "provider",
    "model_id",
    "status",
    "usage",
    "user_id",
    "author_id",
    "depth",
}


def _keys(obj) -> set[str]:
    """Every dict key anywhere in a JSON value."""
    if isinstance(obj, dict):
        return set(obj) | set().union(*(_keys(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(_keys(v) for v in obj)) if obj else set()
    return set()


async def _rich_conversation(app, user):
    """u1 → a1 (tool output, citations, attachments; a sibling a1b off the path) → u2 → a2 (fast)
    → a streaming answer at the leaf. Secrets sit in every column a share must not show."""
    cid = await new_conv(user, "Trip plan")
    secret = dict(
        provider="secret-provider",
        model_id="secret-model",
        cost=1.25,
        credits=3.5,
        raw='{"secret": "raw"}',
        input_tokens=11,
        output_tokens=22,
    )
    u1, a1 = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "plan a trip", "attachments": ["file_1"]},
            {
                "role": "assistant",
                "model_label": "Model Large",
                **secret,
                "blocks": [
                    {"kind": "thinking", "text": "hmm"},
                    {"kind": "tool_call", "name": "search", "input": {"q": "x"}},
                    {"kind": "tool_output", "output": "TOOL-SECRET"},
                    {"kind": "text", "text": "Go to Lisbon."},
                ],
                "citations": [{"url": "https://example.com", "title": "Ex"}],
            },
        ],
    )
    await insert_chain(
        app, cid, [{"role": "assistant", "text": "OFF-PATH answer"}], parent=u1, move_leaf=False
    )
    rest = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "and food?"},
            {
                "role": "assistant",
                "text": "Eat pastel de nata.",
                "fast": 1,
                "model_label": "Hidden Fast Model",
                **secret,
            },
            {"role": "user", "text": "thanks"},
            {"role": "assistant", "text": "STREAMING-PARTIAL", "status": "streaming"},
        ],
    )
    return cid, [u1, a1, *rest]


async def test_snapshot_is_the_redacted_active_path(app, new_user, anon):
    a = await new_user()
    cid, ids = await _rich_conversation(app, a)
    r = await a.client.post(f"/api/conversations/{cid}/share")
    assert r.status_code == 201, r.text
    share = r.json()
    token = share["token"]
    assert len(token) == 48 and int(token, 16) >= 0  # 192 bits of hex
    assert share["conversation_id"] == cid and share["title"] == "Trip plan"
    assert share["message_count"] == 5

    pub = await anon.get(f"/api/public/shared/{token}")
    assert pub.status_code == 200, pub.text
    body = pub.json()
    assert set(body) == {"title", "messages", "created_at"}
    assert body["title"] == "Trip plan" and body["created_at"] == share["created_at"]
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    texts = ["".join(b.get("text", "") for b in m["blocks"] if b["kind"] == "text") for m in msgs]
    assert texts == ["plan a trip", "Go to Lisbon.", "and food?", "Eat pastel de nata.", "thanks"]
    assert not _keys(body) & FORBIDDEN
    assert [b["kind"] for b in msgs[1]["blocks"]] == ["text"]  # no thinking, no tool calls
    assert msgs[1]["citations"] == [{"url": "https://example.com", "title": "Ex"}]
    assert msgs[0]["attachments"] == []  # a bare file id is not a public attachment
    assert msgs[1]["model_label"] == "Model Large" and msgs[1]["fast"] is False
    assert msgs[3]["fast"] is True and "model_label" not in msgs[3]
    raw = pub.text
    for leak in (
        "TOOL-SECRET",
        "hmm",
        "search",
        "secret-provider",
        "secret-model",
        "Hidden Fast Model",
        "STREAMING-PARTIAL",
        "OFF-PATH",
        "raw",
        *ids,
    ):
        assert leak not in raw


async def test_author_name_on_user_messages(app, new_user, anon):
    a = await new_user()
    await set_columns(app, t.users, a.id, name="Ada")
    cid = await new_conv(a)
    await insert_chain(
        app, cid, [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "hello"}]
    )
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    msgs = (await anon.get(f"/api/public/shared/{token}")).json()["messages"]
    assert [m["author_name"] for m in msgs] == ["Ada", ""]


async def test_later_messages_never_leak_and_reshare_replaces(app, new_user, anon):
    a = await new_user()
    cid = await new_conv(a)
    await insert_chain(
        app, cid, [{"role": "user", "text": "first"}, {"role": "assistant", "text": "answer one"}]
    )
    old = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "PRIVATE later"},
            {"role": "assistant", "text": "private answer"},
        ],
    )
    await a.client.patch(f"/api/conversations/{cid}", json={"title": "Renamed"})
    body = (await anon.get(f"/api/public/shared/{old}")).json()
    assert body["title"] == "Chat" and len(body["messages"]) == 2
    assert "PRIVATE" not in json.dumps(body)

    r = await a.client.post(f"/api/conversations/{cid}/share")
    assert r.status_code == 201
    new = r.json()["token"]
    assert new != old and r.json()["title"] == "Renamed"
    assert_error(await anon.get(f"/api/public/shared/{old}"), 404, "not_found")
    assert len((await anon.get(f"/api/public/shared/{new}")).json()["messages"]) == 4
    got = await a.client.get(f"/api/conversations/{cid}/share")
    assert got.status_code == 200 and got.json()["token"] == new
    assert await count_rows(app, t.conversation_shares, conversation_id=cid) == 1


async def test_revoke_kills_the_link(app, new_user, anon):
    a = await new_user()
    cid = await new_conv(a)
    assert_error(await a.client.get(f"/api/conversations/{cid}/share"), 404, "not_shared")
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    r = await a.client.delete(f"/api/conversations/{cid}/share")
    assert r.status_code == 204
    assert_error(await anon.get(f"/api/public/shared/{token}"), 404)
    assert_error(await a.client.get(f"/api/conversations/{cid}/share"), 404, "not_shared")
    assert_error(await a.client.delete(f"/api/conversations/{cid}/share"), 404, "not_shared")
    assert await count_rows(app, t.conversation_shares) == 0


async def test_deleting_the_conversation_deletes_the_share(app, new_user, anon):
    a = await new_user()
    cid = await new_conv(a)
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    assert (await a.client.delete(f"/api/conversations/{cid}")).status_code == 204
    assert_error(await anon.get(f"/api/public/shared/{token}"), 404)


async def test_other_users_cannot_touch_a_share(app, new_user, anon):
    a, b = await new_user(), await new_user()
    cid = await new_conv(a)
    await insert_chain(app, cid, [{"role": "user", "text": "mine"}])
    for method in ("post", "get", "delete"):
        assert_error(await getattr(b.client, method)(f"/api/conversations/{cid}/share"), 404)
    assert await count_rows(app, t.conversation_shares) == 0
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    assert_error(await b.client.delete(f"/api/conversations/{cid}/share"), 404)
    assert (await anon.get(f"/api/public/shared/{token}")).status_code == 200
    assert_error(await anon.post(f"/api/conversations/{cid}/share"), 401)
    assert_error(await a.client.post("/api/conversations/c_nope/share"), 404)
    assert_error(await anon.get("/api/public/shared/" + "0" * 48), 404, "not_found")


async def test_clone_copies_the_snapshot_as_a_chain(app, new_user, anon):
    a, b = await new_user(), await new_user()
    cid, _ = await _rich_conversation(app, a)
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    assert_error(await anon.post(f"/api/public/shared/{token}/clone"), 401)
    assert_error(await b.client.post("/api/public/shared/nope/clone"), 404)
    r = await b.client.post(f"/api/public/shared/{token}/clone")
    assert r.status_code == 201, r.text
    conv = r.json()
    assert conv["id"] != cid and conv["title"] == "Trip plan" and conv["message_count"] == 5
    page = (await b.client.get(f"/api/conversations/{conv['id']}/messages")).json()["items"]
    assert [m["text"] for m in page] == [
        "plan a trip",
        "Go to Lisbon.",
        "and food?",
        "Eat pastel de nata.",
        "thanks",
    ]
    assert conv["active_leaf_id"] == page[-1]["id"]
    assert [m["parent_id"] for m in page[1:]] == [m["id"] for m in page[:-1]]
    assert all(m["status"] == "complete" and m["user_id"] == b.id for m in page)
    assert page[1]["model_label"] == "Model Large" and page[3]["fast"] is True
    assert page[3]["model_id"] == "" and all(m["usage"]["input_tokens"] == 0 for m in page)
    assert "tool_output" not in {blk["kind"] for m in page for blk in m["blocks"]}
    # the clone is b's: a cannot read it, b can keep chatting in it
    assert_error(await a.client.get(f"/api/conversations/{conv['id']}"), 404)
    more = await b.client.post(
        f"/api/conversations/{conv['id']}/messages",
        json={"content": "follow-up", "generate": False},
    )
    assert more.status_code == 201 and more.json()["parent_id"] == page[-1]["id"]


async def test_redaction_is_reapplied_on_read(app, new_user, anon):
    a = await new_user()
    cid = await new_conv(a)
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    tampered = [
        {
            "id": "msg_x",
            "parent_id": None,
            "role": "assistant",
            "cost": 9,
            "raw": "R",
            "provider": "p",
            "model_id": "m",
            "status": "complete",
            "fast": True,
            "model_label": "Hidden",
            "usage": {"input_tokens": 1},
            "created_at": 5,
            "blocks": [{"kind": "tool_output", "output": "TOOL"}, {"kind": "text", "text": "ok"}],
        },
        {"role": "system", "blocks": [{"kind": "text", "text": "SYSTEM PROMPT"}]},
    ]
    await set_columns(app, t.conversation_shares, token, snapshot=tampered)
    body = (await anon.get(f"/api/public/shared/{token}")).json()
    assert body["messages"] == [
        {
            "role": "assistant",
            "blocks": [{"kind": "text", "text": "ok"}],
            "citations": [],
            "attachments": [],
            "created_at": 5,
            "author_name": "",
            "fast": True,
        }
    ]
    assert not _keys(body) & FORBIDDEN


async def test_public_reads_are_limited_per_ip(app, new_user, anon):
    a = await new_user()
    cid = await new_conv(a)
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    for _ in range(60):
        assert (await anon.get(f"/api/public/shared/{token}")).status_code == 200
    r = await anon.get(f"/api/public/shared/{token}")
    err = assert_error(r, 429, "rate_limited")
    assert 0 < err["details"]["retry_after_s"] <= 60
    assert r.headers["retry-after"] == str(err["details"]["retry_after_s"])
    # unknown tokens count too (no free token guessing), and other clients are unaffected
    assert_error(await anon.get("/api/public/shared/guess"), 429)
    other = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=("10.9.8.7", 1)), base_url="http://test"
    )
    async with other:
        assert (await other.get(f"/api/public/shared/{token}")).status_code == 200


def test_throttle_counts_per_key_and_answers_the_wait():
    t = Throttle("test", "2/minute;3/hour")
    assert t.hit("a") == 0 and t.hit("a") == 0
    assert 0 < t.hit("a") <= 60  # the minute window is full: wait ≤ a minute
    assert t.check("a") > 0 and t.check("b") == 0 and t.hit("b") == 0
    t.clear("a")
    assert t.hit("a") == 0
    assert Throttle("off", "").hit("x") == 0  # an empty rate disables a limit


#: One block of every kind chatmem knows, each with display keys and private extras.
EVERY_KIND = [
    {"kind": "text", "text": "visible", "annotations": {"secret": "S1"}},
    {"kind": "thinking", "text": "S2 chain of thought", "signature": "S3"},
    {"kind": "tool_call", "name": "S4-tool", "arguments": {"api_key": "S5"}, "id": "call_1"},
    {"kind": "tool_output", "output": "S6", "tool_call_id": "call_1"},
    {
        "kind": "citation",
        "title": "Doc",
        "url": "https://ex.org/a",
        "text": "quote",
        "source_id": "S7",
        "score": {"raw": "S8"},
    },
    {
        "kind": "image",
        "url": "https://ex.org/i.png",
        "alt": "a cat",
        "width": 4,
        "height": 3,
        "storage_key": "S9",
        "data": "S10",
    },
    {"kind": "image", "url": "javascript:alert(1)", "alt": "bad url"},
    {
        "kind": "document",
        "title": "Report",
        "name": "r.pdf",
        "url": "https://ex.org/r.pdf",
        "content": "S11 full text",
        "file_id": "S12",
    },
    {
        "kind": "artifact",
        "title": "Code",
        "text": "print(1)",
        "language": "python",
        "internal_state": "S13",
    },
    {"kind": "research", "title": "Findings", "text": "summary", "queries": ["S14"]},
    {"kind": "error", "code": "S15", "text": "S16"},
    {"kind": "hologram", "text": "S17 unknown kind"},
    {"text": "S18 no kind"},
    "S19 not a block",
]
EVERY_KIND_PUBLIC = [
    {"kind": "text", "text": "visible"},
    {"kind": "citation", "title": "Doc", "url": "https://ex.org/a", "text": "quote"},
    {"kind": "image", "url": "https://ex.org/i.png", "alt": "a cat", "width": 4, "height": 3},
    {"kind": "image", "alt": "bad url"},
    {"kind": "document", "title": "Report", "name": "r.pdf", "url": "https://ex.org/r.pdf"},
    {"kind": "artifact", "title": "Code", "text": "print(1)", "language": "python"},
    {"kind": "research", "title": "Findings", "text": "summary"},
]


def _set(blocks: list[dict]) -> list[dict]:
    """Blocks without null fields (the response model shows absent optional keys as null)."""
    return [{k: v for k, v in b.items() if v is not None} for b in blocks]


async def test_every_block_kind_is_allow_listed_when_frozen_and_on_read(app, new_user, anon):
    """A share keeps only the README's block kinds and keys — frozen from a real conversation,
    and re-redacted on read from a snapshot stored by an older version."""
    a = await new_user()
    cid = await new_conv(a)
    await insert_chain(
        app,
        cid,
        [
            {
                "role": "user",
                "text": "q",
                "attachments": [
                    {"name": "a.txt", "url": "https://ex.org/a.txt", "storage_key": "S20"}
                ],
            },
            {
                "role": "assistant",
                "blocks": EVERY_KIND[:-1],
                "citations": [{"title": "T", "url": "https://ex.org", "embedding": [1, 2]}],
            },
        ],
    )
    token = (await a.client.post(f"/api/conversations/{cid}/share")).json()["token"]
    body = (await anon.get(f"/api/public/shared/{token}")).json()
    user_msg, answer = body["messages"]
    assert _set(answer["blocks"]) == EVERY_KIND_PUBLIC
    assert answer["citations"] == [{"title": "T", "url": "https://ex.org"}]
    assert user_msg["attachments"] == [{"name": "a.txt", "url": "https://ex.org/a.txt"}]
    old = [{"role": "assistant", "blocks": EVERY_KIND, "created_at": 1, "author_name": 7}]
    await set_columns(app, t.conversation_shares, token, snapshot=old)
    r = await anon.get(f"/api/public/shared/{token}")
    assert _set(r.json()["messages"][0]["blocks"]) == EVERY_KIND_PUBLIC
    for n in range(1, 21):
        assert f"S{n}" not in r.text and f"S{n}" not in json.dumps(body)
    # a clone copies what the public sees, nothing more
    b = await new_user()
    clone = (await b.client.post(f"/api/public/shared/{token}/clone")).json()
    msgs = (await b.client.get(f"/api/conversations/{clone['id']}/messages")).json()["items"]
    assert _set(msgs[0]["blocks"]) == EVERY_KIND_PUBLIC


def test_freeze_keeps_finished_user_and_assistant_messages_only():
    path = [
        {"role": "user", "status": "complete", "user_id": "u1", "author_id": "", "blocks": []},
        {"role": "assistant", "status": "error", "blocks": [{"kind": "text", "text": "boom"}]},
        {"role": "tool", "status": "complete", "blocks": []},
        {"role": "user", "status": "complete", "user_id": "u1", "author_id": "u2", "blocks": []},
        {"role": "assistant", "status": "streaming", "blocks": []},
    ]
    out = redact.freeze(path, {"u1": "Owner", "u2": "Colleague"})
    assert [(m["role"], m["author_name"]) for m in out] == [
        ("user", "Owner"),
        ("user", "Colleague"),
    ]

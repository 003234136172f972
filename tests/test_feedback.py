"""Message ratings and problem reports on SQLite and PostgreSQL: upsert/clear rules, validation
with nothing written, isolation, coexistence with the /rpc feedback route, screenshots, the hourly
limit, SET NULL on delete, and the admin reader."""

from __future__ import annotations

import struct
import zlib

import pytest

from chatmem.db import schema as t
from chatmem.feedback import image

from .social_support import assert_error, count_rows, db_of, insert_chain, new_conv, set_columns
from .test_compat_support import insert_agent


def png(w: int, h: int, extra: bytes = b"\0" * 64) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return image.PNG_SIGNATURE + chunk + extra


def jpeg(w: int, h: int, sof: int = 0xC2) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    dqt = b"\xff\xdb" + struct.pack(">H", 4) + b"\0\0"
    frame = b"\xff" + bytes([sof]) + struct.pack(">HBHHB", 17, 8, h, w, 3) + b"\x01\x11\0" * 3
    return b"\xff\xd8" + app0 + dqt + frame + b"\xff\xda\0\x02" + b"\0" * 32 + b"\xff\xd9"


async def _answer(app, user, **extra):
    cid = await new_conv(user)
    q, a = await insert_chain(
        app, cid, [{"role": "user", "text": "q"}, {"role": "assistant", "text": "a", **extra}]
    )
    return cid, q, a


# ── ratings ─────────────────────────────────────────────────────────────────────────────────────


async def test_rate_upsert_clear_and_mirror(app, new_user):
    u = await new_user()
    cid, _, mid = await _answer(app, u, model_id="model-x", fast=1)
    # a workspace conversation of the user's (workspace rows are seen by members only)
    wid = (await u.client.post("/api/workspaces", json={"name": "W"})).json()["id"]
    await set_columns(app, t.conversations, cid, workspace_id=wid)
    url = f"/api/conversations/{cid}/messages/{mid}/feedback"
    assert (await u.client.get(url)).json() == {"message_id": mid, "feedback": None}

    r = await u.client.post(
        url,
        json={
            "feedback": "dislike",
            "reasons": ["outdated", "unsafe", "outdated"],
            "comment": "old news",
        },
    )
    assert r.status_code == 200, r.text
    assert "model-x" not in r.text  # the real model of a fast-mode answer stays masked
    fb = r.json()["feedback"]
    assert fb["rating"] == "dislike" and fb["reasons"] == ["outdated", "unsafe"]
    assert fb["comment"] == "old news" and "model_id" not in fb
    assert (await u.client.get(url)).json()["feedback"] == fb
    async with db_of(app).read() as c:
        row = (await c.execute(t.message_feedback.select())).one()
    assert (row.workspace_id, row.model_id, row.conversation_id) == (wid, "model-x", cid)
    assert row.id.startswith("mfb_")
    msg = (await u.client.get(f"/api/conversations/{cid}/messages/{mid}")).json()
    assert msg["feedback"] == "dislike"

    # a like keeps the row (same id, same created_at) and drops reasons and comment
    r = await u.client.post(url, json={"feedback": "like", "reasons": ["other"], "comment": "x"})
    fb2 = r.json()["feedback"]
    assert fb2["rating"] == "like" and fb2["reasons"] == [] and fb2["comment"] == ""
    assert fb2["created_at"] == fb["created_at"]
    assert await count_rows(app, t.message_feedback) == 1
    async with db_of(app).read() as c:
        assert (await c.execute(t.message_feedback.select())).one().id == row.id

    r = await u.client.post(url, json={"feedback": ""})
    assert r.status_code == 200 and r.json() == {"message_id": mid, "feedback": None}
    assert await count_rows(app, t.message_feedback) == 0
    msg = (await u.client.get(f"/api/conversations/{cid}/messages/{mid}")).json()
    assert msg["feedback"] == ""
    # clearing again is a no-op
    assert (await u.client.post(url, json={"feedback": ""})).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"feedback": "dislike", "reasons": ["boring"]},
        {"feedback": "dislike", "comment": "x" * 501},
        {"feedback": "meh"},
        {"feedback": "like", "stars": 5},
        {"reasons": ["other"]},
        {"feedback": "dislike", "reasons": "other"},
    ],
)
async def test_bad_rating_bodies_write_nothing(app, new_user, body):
    u = await new_user()
    cid, _, mid = await _answer(app, u)
    r = await u.client.post(f"/api/conversations/{cid}/messages/{mid}/feedback", json=body)
    assert_error(r, 422, "validation_error")
    assert await count_rows(app, t.message_feedback) == 0


async def test_comment_of_exactly_500_chars_is_accepted(app, new_user):
    u = await new_user()
    cid, _, mid = await _answer(app, u)
    r = await u.client.post(
        f"/api/conversations/{cid}/messages/{mid}/feedback",
        json={"feedback": "dislike", "reasons": ["other"], "comment": "é" * 500},
    )
    assert r.status_code == 200 and len(r.json()["feedback"]["comment"]) == 500


async def test_only_finished_assistant_messages(app, new_user):
    u = await new_user()
    cid, q, a = await _answer(app, u)
    [s] = await insert_chain(
        app, cid, [{"role": "assistant", "text": "…", "status": "streaming"}], parent=q
    )
    [e] = await insert_chain(
        app, cid, [{"role": "assistant", "text": "boom", "status": "error"}], parent=q
    )
    base = f"/api/conversations/{cid}/messages"
    assert_error(
        await u.client.post(f"{base}/{q}/feedback", json={"feedback": "like"}),
        422,
        "not_assistant_message",
    )
    assert_error(
        await u.client.post(f"{base}/{s}/feedback", json={"feedback": "like"}),
        409,
        "message_streaming",
    )
    assert await count_rows(app, t.message_feedback) == 0
    r = await u.client.post(f"{base}/{e}/feedback", json={"feedback": "dislike"})
    assert r.status_code == 200 and r.json()["feedback"]["rating"] == "dislike"


async def test_ratings_are_private(app, new_user):
    a, b = await new_user(), await new_user()
    cid, _, mid = await _answer(app, a)
    bcid, _, bmid = await _answer(app, b)
    url = f"/api/conversations/{cid}/messages/{mid}/feedback"
    assert_error(await b.client.post(url, json={"feedback": "like"}), 404)
    assert_error(await b.client.get(url), 404)
    # a's message addressed through b's own conversation is not found either
    cross = f"/api/conversations/{bcid}/messages/{mid}/feedback"
    assert_error(await b.client.post(cross, json={"feedback": "like"}), 404)
    assert_error(
        await a.client.post(
            f"/api/conversations/{cid}/messages/{bmid}/feedback", json={"feedback": "like"}
        ),
        404,
    )
    assert await count_rows(app, t.message_feedback) == 0
    # b's rating of their own message is invisible to a
    await b.client.post(
        f"/api/conversations/{bcid}/messages/{bmid}/feedback", json={"feedback": "like"}
    )
    assert (await a.client.get(url)).json()["feedback"] is None


async def test_native_and_rpc_feedback_share_one_row(app, new_user):
    u = await new_user()
    aid = await insert_agent(app, u.id)
    conv = (await u.client.get(f"/rpc/chat/inbox/{aid}/conversation")).json()["data"]
    cid = conv["conversationId"]
    _, mid = await insert_chain(
        app,
        cid,
        [
            {"role": "user", "text": "hi", "agent_id": aid},
            {"role": "assistant", "text": "yo", "agent_id": aid},
        ],
    )
    rpc = f"/rpc/chat/inbox/{aid}/messages/{mid}/feedback"
    native = f"/api/conversations/{cid}/messages/{mid}/feedback"
    r = await u.client.post(rpc, json={"rating": "negative", "reason": "too_long", "note": "long"})
    assert r.status_code == 200, r.text
    fb = (await u.client.get(native)).json()["feedback"]
    assert (fb["rating"], fb["reasons"], fb["comment"]) == ("dislike", ["too_long"], "long")

    r = await u.client.post(native, json={"feedback": "like"})
    assert r.status_code == 200
    hist = (await u.client.get(f"/rpc/chat/inbox/{aid}/conversation")).json()["data"]
    [answer] = [m for m in hist["messages"] if m["id"] == mid]
    assert answer["feedback"]["rating"] == "positive" and answer["feedback"]["reason"] is None
    assert await count_rows(app, t.message_feedback) == 1

    await u.client.post(native, json={"feedback": ""})
    hist = (await u.client.get(f"/rpc/chat/inbox/{aid}/conversation")).json()["data"]
    assert [m["feedback"] for m in hist["messages"] if m["id"] == mid] == [None]
    r = await u.client.post(rpc, json={"rating": "positive"})
    assert r.status_code == 200
    assert (await u.client.get(native)).json()["feedback"]["rating"] == "like"


# ── problem reports ─────────────────────────────────────────────────────────────────────────────


async def test_report_with_png_screenshot_and_admin_reader(app, new_user):
    u, admin = await new_user(), await new_user(admin=True)
    cid, _, mid = await _answer(app, u)
    shot = png(1280, 720)
    r = await u.client.post(
        "/api/user-feedback",
        headers={"User-Agent": "TestBrowser/1.0"},
        data={
            "description": "The send button froze",
            "message_id": mid,
            "page_path": "/c/x",
            "viewport_width": "1280",
            "viewport_height": "720",
        },
        files={"screenshot": ("shot.png", shot, "application/octet-stream")},
    )
    assert r.status_code == 201, r.text
    rep = r.json()
    assert rep["message_id"] == mid and rep["conversation_id"] == cid
    assert rep["conversation_title"] == "Chat" and rep["user_agent"] == "TestBrowser/1.0"
    assert (rep["page_path"], rep["viewport_width"], rep["viewport_height"]) == ("/c/x", 1280, 720)
    assert rep["screenshot"] == {"mime": "image/png", "width": 1280, "height": 720}
    assert rep["id"].startswith("uf_")

    assert_error(await u.client.get("/api/admin/user-feedback"), 403)
    assert_error(await u.client.get(f"/api/admin/user-feedback/{rep['id']}/screenshot"), 403)
    listing = await admin.client.get("/api/admin/user-feedback")
    assert listing.status_code == 200
    [item] = listing.json()["items"]
    assert item["id"] == rep["id"] and item["user_id"] == u.id and item["user_email"] == u.email
    assert item["screenshot"] == rep["screenshot"] and "screenshot_bytes" not in item
    assert shot.hex() not in listing.text
    img = await admin.client.get(f"/api/admin/user-feedback/{rep['id']}/screenshot")
    assert img.status_code == 200 and img.content == shot
    assert img.headers["content-type"] == "image/png"
    assert_error(await admin.client.get("/api/admin/user-feedback/uf_nope/screenshot"), 404)


async def test_report_without_screenshot_or_links(app, new_user):
    u, admin = await new_user(), await new_user(admin=True)
    r = await u.client.post(
        "/api/user-feedback",
        data={"description": "Dark mode is too dark", "viewport_width": ""},
        files={"screenshot": ("", b"", "application/octet-stream")},
    )
    assert r.status_code == 201, r.text
    rep = r.json()
    assert rep["screenshot"] is None and rep["message_id"] is None
    assert rep["conversation_id"] is None and rep["conversation_title"] == ""
    assert_error(
        await admin.client.get(f"/api/admin/user-feedback/{rep['id']}/screenshot"),
        404,
        "no_screenshot",
    )


async def test_jpeg_dimensions_from_the_frame_header(app, new_user):
    u = await new_user()
    cid = await new_conv(u, "Photos")
    r = await u.client.post(
        "/api/user-feedback",
        data={"description": "broken", "conversation_id": cid},
        files={"screenshot": ("s.jpg", jpeg(640, 480), "image/jpeg")},
    )
    assert r.status_code == 201, r.text
    assert r.json()["screenshot"] == {"mime": "image/jpeg", "width": 640, "height": 480}
    assert r.json()["conversation_title"] == "Photos" and r.json()["message_id"] is None


async def test_bad_reports_write_nothing(app, new_user):
    u, other = await new_user(), await new_user()
    cid, _, mid = await _answer(app, u)
    ocid, _, omid = await _answer(app, other)
    cid2 = await new_conv(u)
    post = u.client.post

    async def send(data, files=None):
        return await post("/api/user-feedback", data=data, files=files)

    assert_error(await send({"page_path": "/"}), 422, "validation_error")
    assert_error(await send({"description": "   "}), 422, "validation_error")
    err = assert_error(await send({"description": "x" * 5001}), 422, "validation_error")
    assert err["details"][0]["loc"] == ["body", "description"]
    err = assert_error(await send({"description": "x", "severity": "high"}), 422)
    assert err["details"][0]["loc"] == ["body", "severity"]
    assert_error(await send({"description": "x", "viewport_width": "wide"}), 422)
    assert_error(await send({"description": "x", "viewport_width": "-1"}), 422)
    assert_error(
        await send(
            {"description": "x"}, {"screenshot": ("a.gif", b"GIF89a" + b"\0" * 20, "image/png")}
        ),
        415,
        "unsupported_media_type",
    )
    assert_error(
        await send({"description": "x"}, {"screenshot": ("a.png", png(10, 10)[:20], "image/png")}),
        422,
        "invalid_screenshot",
    )
    assert_error(
        await send({"description": "x"}, {"screenshot": ("a.png", png(8000, 4001), "image/png")}),
        422,
        "screenshot_too_many_pixels",
    )
    assert_error(
        await send(
            {"description": "x"}, {"screenshot": ("a.jpg", jpeg(4001, 8000, 0xC0), "image/jpeg")}
        ),
        422,
        "screenshot_too_many_pixels",
    )
    big = png(100, 100, b"\0" * (3 * 1024 * 1024))
    assert_error(
        await send({"description": "x"}, {"screenshot": ("a.png", big, "image/png")}),
        413,
        "screenshot_too_large",
    )
    huge = png(100, 100, b"\0" * (4 * 1024 * 1024))
    assert_error(
        await send({"description": "x"}, {"screenshot": ("a.png", huge, "image/png")}),
        413,
        "screenshot_too_large",
    )
    assert_error(
        await send({"description": "x"}, {"description": ("d.txt", b"x", "text/plain")}), 422
    )
    assert_error(await send({"description": "x", "screenshot": "not a file"}), 422)
    assert_error(await send({"description": "x", "message_id": omid}), 404)
    assert_error(await send({"description": "x", "conversation_id": ocid}), 404)
    assert_error(await send({"description": "x", "message_id": mid, "conversation_id": cid2}), 404)
    assert_error(await send({"description": "x", "message_id": "msg_nope"}), 404)
    assert await count_rows(app, t.user_feedback) == 0
    # the limits themselves are inclusive: 5,000 characters and exactly 32 MP are fine
    r = await send(
        {"description": "y" * 5000, "message_id": mid, "conversation_id": cid},
        {"screenshot": ("a.png", png(8000, 4000), "image/png")},
    )
    assert r.status_code == 201, r.text


async def test_ten_reports_per_user_per_hour(app, new_user):
    u, v = await new_user(), await new_user()
    for i in range(10):
        r = await u.client.post("/api/user-feedback", data={"description": f"bug {i}"})
        assert r.status_code == 201, r.text
    err = assert_error(
        await u.client.post("/api/user-feedback", data={"description": "11"}), 429, "rate_limited"
    )
    assert err["details"]["retry_after_ms"] > 0
    assert await count_rows(app, t.user_feedback, user_id=u.id) == 10
    assert (
        await v.client.post("/api/user-feedback", data={"description": "mine"})
    ).status_code == 201
    # reports older than an hour no longer count
    async with db_of(app).write() as c:
        await c.execute(
            t.user_feedback.update()
            .where(t.user_feedback.c.user_id == u.id)
            .values(created_at=t.user_feedback.c.created_at - 3_600_001)
        )
    assert (
        await u.client.post("/api/user-feedback", data={"description": "again"})
    ).status_code == 201


async def test_reports_survive_deleting_message_and_conversation(app, new_user):
    u, admin = await new_user(), await new_user(admin=True)
    cid, q, a = await _answer(app, u)
    r1 = (
        await u.client.post(
            "/api/user-feedback", data={"description": "on the answer", "message_id": a}
        )
    ).json()
    r2 = (
        await u.client.post(
            "/api/user-feedback", data={"description": "on the chat", "conversation_id": cid}
        )
    ).json()
    assert (await u.client.delete(f"/api/conversations/{cid}/messages/{q}")).status_code == 200
    items = {
        i["id"]: i for i in (await admin.client.get("/api/admin/user-feedback")).json()["items"]
    }
    assert items[r1["id"]]["message_id"] is None and items[r1["id"]]["conversation_id"] == cid
    assert (await u.client.delete(f"/api/conversations/{cid}")).status_code == 204
    items = {
        i["id"]: i for i in (await admin.client.get("/api/admin/user-feedback")).json()["items"]
    }
    for rid in (r1["id"], r2["id"]):
        assert items[rid]["conversation_id"] is None and items[rid]["message_id"] is None
        assert items[rid]["conversation_title"] == "Chat"
    assert items[r2["id"]]["description"] == "on the chat"


async def test_admin_list_pages_newest_first(app, new_user):
    u, admin = await new_user(), await new_user(admin=True)
    ids = [
        (await u.client.post("/api/user-feedback", data={"description": str(i)})).json()["id"]
        for i in range(5)
    ]
    # two reports in the same millisecond still page without skips or repeats
    await set_columns(app, t.user_feedback, ids[3], created_at=1)
    await set_columns(app, t.user_feedback, ids[4], created_at=1)
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await admin.client.get("/api/admin/user-feedback", params=params)).json()
        seen += [i["id"] for i in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [ids[2], ids[1], ids[0], ids[4], ids[3]]
    assert_error(
        await admin.client.get("/api/admin/user-feedback", params={"cursor": "junk"}),
        400,
        "invalid_cursor",
    )


def test_sniff_reads_headers_only():
    assert image.sniff(png(3, 2)) == image.ImageInfo("image/png", 3, 2)
    assert image.sniff(jpeg(7, 5, 0xC0)) == image.ImageInfo("image/jpeg", 7, 5)
    assert image.sniff(jpeg(7, 5, 0xC2)).pixels == 35
    for bad in (
        png(0, 5),
        image.PNG_SIGNATURE + b"\0" * 4,
        b"\xff\xd8\xff\xd9",
        b"\xff\xd8\xff\xe0\x00\x01",
        jpeg(0, 5),
    ):
        with pytest.raises(image.BadImage):
            image.sniff(bad)
    for other in (b"", b"GIF89a", b"RIFF....WEBP", b"<svg/>"):
        with pytest.raises(image.UnsupportedImage):
            image.sniff(other)

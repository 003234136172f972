"""Importers end to end on SQLite and PostgreSQL: each format's fixture (tree shape, siblings,
active leaf, dates, models, blocks, counts), the import as a job with progress and a report,
idempotency and growth, zip and non-UTF-8 input, malformed files (a clear 4xx, nothing written),
per-conversation all-or-nothing, dry run + commit, and the follow-up pipeline catching up once per
conversation."""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter

import pytest
from sqlalchemy import func, select

from chatmem.db import schema as t
from tests.port_support import (
    DATA,
    client_for,
    conversations,
    import_file,
    load,
    local_import,
    messages,
    port_app,
    run_jobs,
    source_id,
    tree_of,
    upload,
)

T = 1_700_000_000_000


async def _count(app, table, **where) -> int:
    q = select(func.count()).select_from(table)
    for k, v in where.items():
        q = q.where(table.c[k] == v)
    async with app.state.runtime.db.read() as c:
        return (await c.execute(q)).scalar_one()


async def _by_source(app, user_id) -> dict:
    out = {}
    async with app.state.runtime.db.read() as c:
        q = select(t.import_sources).where(t.import_sources.c.user_id == user_id)
        for r in (await c.execute(q)).all():
            out[r.source_id] = r.conversation_id
    return out


async def test_chatgpt_tree_leaf_dates_blocks_and_report(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        r = await upload(c, DATA / "chatgpt.json")
        assert r.status_code == 202, r.text
        job = r.json()
        assert job["status"] == "queued" and job["format"] == "chatgpt"
        assert await _count(app, t.jobs, kind="import.run") == 1
        await run_jobs(app)
        rep = (await c.get(f"/api/imports/{job['id']}")).json()
        assert rep["status"] == "done" and rep["progress"] == 1.0
        assert rep["conversations_processed"] == 4
        assert rep["report"]["conversations"] == {
            "imported": 2,
            "updated": 0,
            "unchanged": 0,
            "failed": 1,
            "empty": 1,
        }
        assert rep["report"]["messages"] == {"imported": 14}
        assert rep["report"]["skipped"] == {
            "empty": 2,
            "hidden": 1,
            "reasoning_recap": 1,
            "duplicate_id": 1,
        }
        [err] = rep["report"]["errors"]
        assert err["index"] == 2 and err["code"] == "malformed" and "mapping" in err["message"]
        warnings = [w["message"] for w in rep["report"]["warnings"]]
        assert any("became roots" in w for w in warnings) and any("cycle" in w for w in warnings)

        src = await _by_source(app, c.user_id)
        assert set(src) == {"conv-branch", "conv-ugly"}
        convs = {x.id: x for x in await conversations(app, c.user_id)}
        conv = convs[src["conv-branch"]]
        assert conv.title == "Trip planning" and conv.created_at == T - 5000
        assert conv.model_id == "gpt-4o" and conv.message_count == 9
        rows = await messages(app, conv.id)
        shape = tree_of(rows)
        assert shape == {
            "u1": (None, "user", 0),
            "a1": ("u1", "assistant", 1),
            "a1b": ("u1", "assistant", 1),
            "u2": ("a1b", "user", 2),
            "t1": ("u2", "assistant", 3),
            "u3": ("t1", "user", 4),
            "c1": ("u3", "assistant", 5),
            "u1b": (None, "user", 0),
            "a4": ("u1b", "assistant", 1),
        }
        by_src = {source_id(m): m for m in rows}
        assert conv.active_leaf_id == by_src["c1"].id
        assert conv.last_message_at == T + 310_000
        assert by_src["u1"].created_at == T + 500 and by_src["a4"].created_at == T + 310_000
        assert by_src["a1"].model_id == "gpt-4o" and by_src["t1"].model_id == "o3"
        assert [b["kind"] for b in by_src["t1"].blocks] == ["thinking", "text"]
        assert by_src["t1"].metadata["import"]["merged"] == ["a2"]
        call, out, answer = by_src["c1"].blocks
        assert call == {
            "kind": "tool_call",
            "id": "c1",
            "name": "python",
            "arguments": "print(2**10)",
        }
        assert out["kind"] == "tool_output" and out["text"] == "1024"
        assert answer == {"kind": "text", "text": "2**10 = 1024"}
        assert by_src["c1"].search_text == "2**10 = 1024"  # tool data never reaches search
        image, question = by_src["u2"].blocks
        assert image["kind"] == "image" and image["name"] == "kyoto.png"
        assert image["mime_type"] == "image/png" and "not in it" in image["note"]
        assert question == {"kind": "text", "text": "What is in this photo?"}

        ugly = await messages(app, src["conv-ugly"])
        shape = tree_of(ugly)
        assert shape["x1"] == (None, "user", 0)  # its parent was missing
        assert shape["x3"] == ("x2", "assistant", 2)  # the empty node between was dropped
        assert {shape["c-a"][0], shape["c-b"][0]} == {None, "c-a"}  # the cycle broken once
        x2 = next(m for m in ugly if source_id(m) == "x2")
        assert x2.blocks[0]["text"] == "reply\ufffd with a NUL"
        x3 = next(m for m in ugly if source_id(m) == "x3")
        assert x3.created_at == x2.created_at  # no date: its parent's

        # the whole conversation reads through the API like any other
        page = (await c.get(f"/api/conversations/{conv.id}/messages")).json()
        assert [m["text"] for m in page["items"]][-1] == "2**10 = 1024"


async def test_followups_are_one_job_stream_per_conversation(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        await import_file(app, c, DATA / "chatgpt.json")
        kinds = Counter()
        async with app.state.runtime.db.read() as conn:
            for (k,) in (await conn.execute(select(t.jobs.c.kind))).all():
                kinds[k] += 1
        assert kinds["followups"] == 2  # one per imported conversation, not one per message
        assert kinds["memory.extract"] == 0  # scheduled by the followups job when its window ends


IMPORTS = [
    # file, conversations, messages, {source conversation: (leaf, roots, sibling groups)}
    ("claude.json", 2, 9, {"claude-linear": ("a2", 1), "claude-tree": ("b4", 1)}),
    ("openwebui.json", 2, 7, {"owui-tree": ("m4", 1), "owui-linear": ("l2", 1)}),
    ("librechat_tree.json", 1, 5, {"lc-1": ("p4", 1)}),
    ("librechat_flat.json", 1, 5, {"lc-2": ("q5", 2)}),
]


@pytest.mark.parametrize(("name", "n_conv", "n_msg", "expect"), IMPORTS)
async def test_each_format(db_url, tmp_path, name, n_conv, n_msg, expect):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, DATA / name)
        assert rep["status"] == "done", rep
        assert rep["report"]["conversations"]["imported"] == n_conv
        assert rep["report"]["messages"]["imported"] == n_msg
        src = await _by_source(app, c.user_id)
        convs = {x.id: x for x in await conversations(app, c.user_id)}
        for sid, (leaf, roots) in expect.items():
            conv = convs[src[sid]]
            rows = await messages(app, conv.id)
            by_src = {source_id(m): m for m in rows}
            assert conv.active_leaf_id == by_src[leaf].id
            assert sum(1 for m in rows if m.parent_id is None) == roots
            assert conv.message_count == len(rows)


async def test_format_details(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        for name in ("claude.json", "openwebui.json", "librechat_tree.json", "librechat_flat.json"):
            await import_file(app, c, DATA / name)
        src = await _by_source(app, c.user_id)

        async def rows(sid):
            return {source_id(m): m for m in await messages(app, src[sid])}

        claude = await rows("claude-linear")
        kinds = [b["kind"] for b in claude["a1"].blocks]
        assert kinds == ["thinking", "tool_call", "tool_output", "text"]
        assert json.loads(claude["a1"].blocks[1]["arguments"]) == {"city": "Paris"}
        doc = claude["h1"].blocks[1]
        assert doc["kind"] == "document" and doc["name"] == "notes.txt"
        assert doc["text"] == "bring umbrella"
        assert claude["h1"].created_at == 1_709_287_200_000
        tree = await rows("claude-tree")
        assert tree["b3"].parent_id == tree["b3e"].parent_id == tree["b2"].id  # an edit: siblings

        ow = await rows("owui-tree")
        assert ow["m2"].parent_id == ow["m2b"].parent_id == ow["m1"].id  # a regeneration
        assert ow["m2b"].blocks[0] == {"kind": "thinking", "text": "Keep it short & clear"}
        assert ow["m2b"].search_text == "Recursion is self-reference."
        assert [b["kind"] for b in ow["m4"].blocks] == ["tool_call", "tool_output", "text"]
        assert ow["m4"].model_id == "gpt-4o" and ow["m2"].model_id == "llama3.1:8b"
        img = ow["m1"].blocks[1]
        assert img["kind"] == "image" and "source_ref" not in img  # a data: URL is not a ref
        linear = await rows("owui-linear")
        assert linear["l2"].status == "error" and linear["l2"].blocks[-1]["kind"] == "error"

        lc = await rows("lc-1")
        assert lc["p2"].parent_id == lc["p2b"].parent_id == lc["p1"].id
        assert lc["p4"].model_id == "gpt-4o"
        flat = await rows("lc-2")
        assert [b["kind"] for b in flat["q2"].blocks] == [
            "thinking",
            "tool_call",
            "tool_output",
            "text",
        ]
        assert flat["q4"].status == "error" and flat["q5"].parent_id is None
        convs = {x.id: x for x in await conversations(app, c.user_id)}
        assert convs[src["owui-tree"]].pinned == 1
        assert convs[src["lc-2"]].model_id == "claude-3-5-sonnet"


def _grow(conv: dict) -> None:
    """One more user message after the ChatGPT fixture's first conversation's last answer (a3)."""
    conv["mapping"]["a3"]["children"] = ["u9"]
    conv["mapping"]["u9"] = {
        "id": "u9",
        "parent": "a3",
        "children": [],
        "message": {
            "id": "u9",
            "author": {"role": "user"},
            "create_time": 1_700_000_900,
            "content": {"content_type": "text", "parts": ["One more thing"]},
        },
    }
    conv["current_node"] = "u9"


async def test_importing_twice_creates_nothing_and_growth_adds_only_the_new(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        await import_file(app, c, DATA / "chatgpt.json")
        before = await _count(app, t.messages, user_id=c.user_id)
        jobs = await _count(app, t.jobs)
        again = await import_file(app, c, DATA / "chatgpt.json")
        assert again["report"]["conversations"] == {
            "imported": 0,
            "updated": 0,
            "unchanged": 2,
            "failed": 1,
            "empty": 1,
        }
        assert await _count(app, t.messages, user_id=c.user_id) == before
        assert await _count(app, t.conversations, user_id=c.user_id) == 2
        assert await _count(app, t.jobs) == jobs + 1  # only the import job itself

        data = load("chatgpt.json")
        conv = data[0]
        _grow(conv)
        dry = await import_file(app, c, DATA / "chatgpt.json", dry_run=True)
        assert dry["report"]["conversations"]["unchanged"] == 2  # says what a real run would do
        assert dry["report"]["messages"] == {"imported": 0}
        dry = await import_file(app, c, json.dumps(data), dry_run=True)
        assert dry["report"]["conversations"]["updated"] == 1
        assert dry["report"]["messages"] == {"imported": 1}
        assert await _count(app, t.messages, user_id=c.user_id) == before
        grown = await import_file(app, c, json.dumps(data))
        assert grown["report"]["conversations"]["updated"] == 1
        assert grown["report"]["messages"]["imported"] == 1
        cid = (await _by_source(app, c.user_id))["conv-branch"]
        rows = {source_id(m): m for m in await messages(app, cid)}
        assert rows["u9"].parent_id == rows["c1"].id  # under the message a3 was folded into
        [conv_row] = [x for x in await conversations(app, c.user_id) if x.id == cid]
        assert conv_row.active_leaf_id == rows["u9"].id and conv_row.message_count == 10


async def test_zip_as_downloaded(db_url, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("chat.html", "<html></html>")
        z.writestr("user.json", json.dumps({"id": "user-1"}))
        z.writestr("conversations.json", (DATA / "chatgpt.json").read_bytes())
        z.writestr("file-img123-kyoto.png", b"\x89PNG...")
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, buf.getvalue(), name="export.zip")
        assert rep["status"] == "done" and rep["format"] == "chatgpt"
        assert rep["report"]["conversations"]["imported"] == 2
        cid = (await _by_source(app, c.user_id))["conv-branch"]
        rows = {source_id(m): m for m in await messages(app, cid)}
        assert "original export archive" in rows["u2"].blocks[0]["note"]


async def test_non_utf8_bytes_are_replaced_and_counted(db_url, tmp_path):
    raw = (DATA / "claude.json").read_bytes().replace(b'"Thanks"', b'"Th\xffnks \xc3"', 1)
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, raw)
        assert rep["status"] == "done" and rep["report"]["replaced_bytes"] >= 2
        cid = (await _by_source(app, c.user_id))["claude-linear"]
        rows = {source_id(m): m for m in await messages(app, cid)}
        assert rows["h2"].search_text.startswith("Th\ufffdnks")


@pytest.mark.parametrize(
    ("data", "form", "code"),
    [
        (b"{not json", {}, "not_json"),
        (b'{"hello": "world"}', {}, "unknown_format"),
        (b"", {}, "empty_file"),
        (b"42", {}, "not_an_export"),
        (b"PK\x03\x04 broken zip", {}, "bad_zip"),
        ((DATA / "claude.json").read_bytes(), {"format": "word"}, None),
    ],
)
async def test_bad_files_answer_422_and_write_nothing(db_url, tmp_path, data, form, code):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        r = await upload(c, data, **form)
        assert r.status_code == 422, r.text
        if code:
            assert r.json()["error"]["code"] == code
        assert await _count(app, t.imports) == 0 and await _count(app, t.jobs) == 0
        folder = tmp_path / "transfers" / "imports"
        assert not folder.exists() or not any(folder.iterdir())


async def test_a_file_cut_short_keeps_whole_conversations_only(db_url, tmp_path):
    raw = (DATA / "chatgpt.json").read_text()
    cut = raw[: raw.index('"Ugly"') + 200]  # inside the second conversation
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, cut)
        assert rep["status"] == "failed" and "not valid JSON after 1" in rep["error"]
        assert rep["report"]["conversations"]["imported"] == 1
        assert set(await _by_source(app, c.user_id)) == {"conv-branch"}
        assert await _count(app, t.messages, user_id=c.user_id) == 9


async def test_a_bad_message_fails_its_conversation_only(db_url, tmp_path):
    data = load("chatgpt.json")
    data[1]["mapping"]["x1"]["message"]["content"]["parts"] = ["x" * 5000]
    async with port_app(db_url, tmp_path, max_message_bytes=4000) as app, client_for(app) as c:
        rep = await import_file(app, c, json.dumps(data))
        conv = rep["report"]["conversations"]
        assert conv["imported"] == 1 and conv["failed"] == 2
        codes = {e["source_id"]: e["code"] for e in rep["report"]["errors"]}
        assert codes["conv-ugly"] == "message_too_large"
        assert set(await _by_source(app, c.user_id)) == {"conv-branch"}
        assert await _count(app, t.messages, user_id=c.user_id) == 9  # nothing of conv-ugly


async def test_a_conversation_twice_in_one_file_is_counted_as_a_real_run_writes_it(
    db_url, tmp_path
):
    """The same source conversation twice in one file (the second copy one message longer): a
    real run imports it once and updates it with the one message; the dry run before it says
    exactly that (it counted the copy as imported twice)."""
    data = load("chatgpt.json")
    conv = data[0]
    grown = json.loads(json.dumps(conv))
    _grow(grown)
    body = json.dumps([conv, conv, grown])
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        dry = await import_file(app, c, body, dry_run=True)
        real = await import_file(app, c, body)
        assert real["report"]["conversations"]["imported"] == 1
        assert real["report"]["conversations"]["unchanged"] == 1
        assert real["report"]["conversations"]["updated"] == 1
        assert dry["report"]["conversations"] == real["report"]["conversations"]
        assert dry["report"]["messages"] == real["report"]["messages"]
        assert await _count(app, t.conversations, user_id=c.user_id) == 1


async def test_dry_run_reports_then_commit_imports(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, DATA / "chatgpt.json", dry_run=True)
        assert rep["dry_run"] and rep["status"] == "done"
        assert rep["report"]["conversations"]["imported"] == 2
        assert rep["report"]["messages"]["imported"] == 14
        assert rep["report"]["skipped"]["hidden"] == 1
        assert await _count(app, t.conversations) == 0 and await _count(app, t.messages) == 0
        r = await c.post(f"/api/imports/{rep['id']}/commit")
        assert r.status_code == 202 and r.json()["status"] == "queued"
        await run_jobs(app)
        done = (await c.get(f"/api/imports/{rep['id']}")).json()
        assert not done["dry_run"] and done["report"]["conversations"]["imported"] == 2
        assert await _count(app, t.messages, user_id=c.user_id) == 14
        r = await c.post(f"/api/imports/{rep['id']}/commit")
        assert r.status_code == 409
        assert not any((tmp_path / "transfers" / "imports").iterdir())  # upload removed


async def test_imports_are_private(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a, client_for(app) as b:
        rep = await import_file(app, a, DATA / "claude.json")
        assert (await b.get(f"/api/imports/{rep['id']}")).status_code == 404
        assert (await b.post(f"/api/imports/{rep['id']}/commit")).status_code == 404
        assert (await b.get("/api/imports")).json()["items"] == []
        assert [i["id"] for i in (await a.get("/api/imports")).json()["items"]] == [rep["id"]]


async def test_a_crashed_job_resumes_after_the_last_conversation(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        r = await upload(c, DATA / "chatgpt.json")
        iid = r.json()["id"]
        from chatmem.portability import store

        # an earlier attempt committed the first conversation, then died
        async with app.state.runtime.db.write() as conn:
            await store.update_import(conn, iid, status="running", items_done=1)
        await run_jobs(app)
        rep = (await c.get(f"/api/imports/{iid}")).json()
        assert rep["status"] == "done" and rep["conversations_processed"] == 4
        assert set(await _by_source(app, c.user_id)) == {"conv-ugly"}


async def test_imported_history_feeds_memory(db_url, tmp_path):
    doc = [
        {
            "id": "conv-mem",
            "title": "About me",
            "create_time": 1_600_000_000,
            "current_node": "m2",
            "mapping": {
                "m1": {
                    "id": "m1",
                    "parent": None,
                    "message": {
                        "author": {"role": "user"},
                        "create_time": 1_600_000_000,
                        "content": {"content_type": "text", "parts": ["My name is Alice."]},
                    },
                },
                "m2": {
                    "id": "m2",
                    "parent": "m1",
                    "message": {
                        "author": {"role": "assistant"},
                        "create_time": 1_600_000_010,
                        "content": {"content_type": "text", "parts": ["Nice to meet you, Alice."]},
                    },
                },
            },
        }
    ]
    async with port_app(db_url, tmp_path, log_followup_delay_ms=0) as app, client_for(app) as c:
        await import_file(app, c, json.dumps(doc))
        await run_jobs(app, kinds=None)
        async with app.state.runtime.db.read() as conn:
            mems = (
                await conn.execute(select(t.memories).where(t.memories.c.user_id == c.user_id))
            ).all()
            conv = (
                await conn.execute(
                    select(t.conversations).where(t.conversations.c.user_id == c.user_id)
                )
            ).one()
        assert conv.memory_cursor is not None  # extraction walked the imported path
        assert any("Alice" in m.memory_text for m in mems)


async def test_an_uncommitted_dry_run_upload_expires(db_url, tmp_path):
    async with port_app(db_url, tmp_path, export_ttl_s=0) as app, client_for(app) as c:
        rep = await import_file(app, c, DATA / "claude.json", dry_run=True)
        folder = tmp_path / "transfers" / "imports"
        assert len(list(folder.iterdir())) == 1
        await upload(c, DATA / "claude.json")  # any later upload sweeps expired ones
        assert len(list(folder.iterdir())) == 1  # only the new upload is left
        assert (await c.post(f"/api/imports/{rep['id']}/commit")).status_code == 409


async def test_imported_messages_are_searchable(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as c, client_for(app) as other:
        await import_file(app, c, DATA / "claude.json")
        r = await c.get("/api/search", params={"q": "rainy"})
        assert r.status_code == 200, r.text
        [hit] = r.json()["messages"]
        assert "18C and rainy" in hit["snippet"]["text"] and hit["role"] == "assistant"
        assert hit["created_at"] == 1_709_287_205_000  # the original date
        r = await c.get("/api/search", params={"q": "Orange"})
        assert [h["conversation_title"] for h in r.json()["messages"]] == ["Edits"]
        assert (await other.get("/api/search", params={"q": "Orange"})).json()["messages"] == []


async def test_a_large_import_stays_under_a_memory_ceiling(db_url, tmp_path):
    """30,000 messages (~14 MB of JSON): the whole job — streamed parse, repair, inserts — never
    holds more than a fraction of the file (bench/imports.py measures RSS at 100,000)."""
    import tracemalloc

    from chatmem.portability import importer
    from tests.port_support import write_chatgpt_export

    path = tmp_path / "big.json"
    n = write_chatgpt_export(path, 300, 100)
    size = path.stat().st_size
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rt = app.state.runtime
        out = await local_import(app, c.user_id, path)
        tracemalloc.start()
        try:
            done = await importer.run_import(rt.db, rt.settings, out["id"])
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert done["status"] == "done" and done["report"]["messages"]["imported"] == n
        assert peak < size / 4, (peak, size)
        assert await _count(app, t.messages, user_id=c.user_id) == n


def _claude_ugly() -> list:
    def m(uid, parent, sender, body, **extra):
        return {
            "uuid": uid,
            "parent_message_uuid": parent,
            "sender": sender,
            "text": body,
            "content": [{"type": "text", "text": body}] if body else [],
            "created_at": "2024-03-01T10:00:00Z",
            "mystery_field": {"nested": [1, 2]},  # unknown fields are ignored
            **extra,
        }

    root = "00000000-0000-4000-8000-000000000000"
    return [
        {
            "uuid": "cl-ugly",
            "name": "Ugly",
            "created_at": "2024-03-01T10:00:00Z",
            "unknown_top": True,
            "chat_messages": [
                m("u1", root, "human", "Hi"),
                m("a1", "u1", "assistant", "Hello"),
                m("a1", "u1", "assistant", "a duplicate"),
                m("u2", "gone", "human", "parent missing"),
                m("a2", "u2", "assistant", ""),  # empty: its child moves up to u2
                m("u3", "a2", "human", "under the empty one"),
                m("y1", "y2", "human", "cycle one"),
                m("y2", "y1", "assistant", "cycle two"),
            ],
        },
        {"uuid": "cl-bad", "name": "Bad", "chat_messages": "not a list"},
    ]


def _openwebui_ugly() -> list:
    def m(mid, parent, role, body):
        return {
            "id": mid,
            "parentId": parent,
            "childrenIds": ["whatever"],  # redundant, and wrong here: ignored
            "role": role,
            "content": body,
            "timestamp": 1_700_000_000,
            "mystery": {"x": 1},
        }

    msgs = {
        "u1": m("u1", None, "user", "Hi"),
        "a1": m("a1", "u1", "assistant", "Hello"),
        "dup": m("a1", "u1", "assistant", "a duplicate"),  # same id under another key
        "u2": m("u2", "gone", "user", "parent missing"),
        "a2": m("a2", "u2", "assistant", ""),
        "u3": m("u3", "a2", "user", "under the empty one"),
        "y1": m("y1", "y2", "user", "cycle one"),
        "y2": m("y2", "y1", "assistant", "cycle two"),
    }
    return [
        {
            "id": "ow-ugly",
            "title": "Ugly",
            "chat": {"history": {"currentId": "not-there", "messages": msgs}, "extra": []},
            "created_at": 1_700_000_000,
        },
        {"id": "ow-bad", "title": "Bad", "chat": {"history": {"messages": "nope"}}},
    ]


def _librechat_ugly() -> dict:
    def m(mid, parent, user, body):
        return {
            "messageId": mid,
            "parentMessageId": parent,
            "isCreatedByUser": user,
            "text": body,
            "createdAt": "2024-03-01T10:00:00.000Z",
            "mystery": None,
        }

    return {
        "conversationId": "lc-ugly",
        "title": "Ugly",
        "unknown": {"deep": {"deeper": 1}},
        "messages": [
            m("u1", "00000000-0000-0000-0000-000000000000", True, "Hi"),
            m("a1", "u1", False, "Hello"),
            m("a1", "u1", False, "a duplicate"),
            m("u2", "gone", True, "parent missing"),
            m("a2", "u2", False, ""),
            m("u3", "a2", True, "under the empty one"),
            m("y1", "y2", True, "cycle one"),
            m("y2", "y1", False, "cycle two"),
        ],
    }


@pytest.mark.parametrize(
    ("doc", "fmt", "failed"),
    [
        (_claude_ugly(), "claude", 1),
        (_openwebui_ugly(), "openwebui", 1),
        (_librechat_ugly(), "librechat", 0),  # one conversation per file
    ],
    ids=["claude", "openwebui", "librechat"],
)
async def test_ugly_input_in_every_format(db_url, tmp_path, doc, fmt, failed):
    """Duplicated ids, a missing parent, an empty node with a child, a parent cycle, unknown
    fields — and, where the file holds several, a malformed conversation next to a good one."""
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rep = await import_file(app, c, json.dumps(doc))
        assert rep["status"] == "done" and rep["format"] == fmt, rep
        conv = rep["report"]["conversations"]
        assert conv["imported"] == 1 and conv["failed"] == failed
        if failed:
            [err] = rep["report"]["errors"]
            assert err["index"] == 1 and err["code"] == "malformed"
        assert rep["report"]["skipped"] == {"duplicate_id": 1, "empty": 1}
        warnings = " ".join(w["message"] for w in rep["report"]["warnings"])
        assert "became roots" in warnings and "cycle" in warnings
        [row] = await conversations(app, c.user_id)
        rows = await messages(app, row.id)
        shape = tree_of(rows)
        assert set(shape) == {"u1", "a1", "u2", "u3", "y1", "y2"}
        assert shape["a1"][0] == "u1" and shape["u2"][0] is None
        assert shape["u3"][0] == "u2"  # moved up past the empty node
        assert {shape["y1"][0], shape["y2"][0]} in ({None, "y1"}, {None, "y2"})
        by_src = {source_id(m): m for m in rows}
        assert by_src["a1"].blocks == [{"kind": "text", "text": "Hello"}]  # the first one wins
        leaf = next(m for m in rows if m.id == row.active_leaf_id)
        assert not any(m.parent_id == leaf.id for m in rows)  # a leaf
        assert row.message_count == 6
        again = await import_file(app, c, json.dumps(doc))
        assert again["report"]["conversations"]["unchanged"] == 1
        assert await _count(app, t.messages, user_id=c.user_id) == 6


async def test_an_upload_over_the_limit_is_413_and_keeps_nothing(db_url, tmp_path):
    async with port_app(db_url, tmp_path, max_import_bytes=1000) as app, client_for(app) as c:
        r = await upload(c, DATA / "claude.json")  # 3.4 kB
        assert r.status_code == 413, r.text
        assert r.json()["error"]["code"] == "payload_too_large"
        assert await _count(app, t.imports) == 0 and await _count(app, t.jobs) == 0
        folder = tmp_path / "transfers" / "imports"
        assert not folder.exists() or not any(folder.iterdir())


async def test_progress_is_reported_while_the_job_runs(db_url, tmp_path, monkeypatch):
    """The job's row (what GET /api/imports/{id} answers) and the CLI's callback move forward
    with the bytes read, before the end."""
    from chatmem.portability import importer
    from tests.port_support import write_chatgpt_export

    monkeypatch.setattr(importer, "PROGRESS_EVERY_MS", 0)
    path = tmp_path / "mid.json"
    n = write_chatgpt_export(path, 60, 20)
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rt = app.state.runtime
        out = await local_import(app, c.user_id, path)
        seen: list[tuple] = []
        real_save = importer._Run._save_progress

        async def save_and_read(self, conn):
            await real_save(self, conn)
            row = await importer.store.get_import(conn, c.user_id, self.iid)
            api = importer.import_out(row)
            seen.append((api["status"], api["progress"], api["conversations_processed"]))

        monkeypatch.setattr(importer._Run, "_save_progress", save_and_read)
        frames: list[dict] = []
        done = await importer.run_import(rt.db, rt.settings, out["id"], progress=frames.append)
        assert done["status"] == "done" and done["report"]["messages"]["imported"] == n
        running = [s for s in seen if s[0] == "running"]
        assert len(running) == 60
        assert [s[2] for s in running] == list(range(1, 61))
        assert any(0 < s[1] < 1 for s in running)  # part of the file read, visibly
        assert [p for _s, p, _n in running] == sorted(p for _s, p, _n in running)
        mid = [f for f in frames if f["status"] == "running"]
        assert mid and all(f["bytes_total"] == path.stat().st_size for f in mid)
        assert any(f["bytes_read"] < f["bytes_total"] for f in mid)
        assert frames[-1]["status"] == "done"


async def test_a_write_failing_midway_leaves_no_part_of_its_conversation(
    db_url, tmp_path, monkeypatch
):
    """The conversation row is written before its messages: when the messages' insert fails, the
    transaction takes the row with it, and a later attempt imports the conversation whole."""
    from chatmem.portability import importer, store

    real = store.insert_messages
    calls = {"n": 0}

    async def flaky(conn, rows):
        calls["n"] += 1
        if calls["n"] == 2:  # the second conversation (conv-ugly)
            raise RuntimeError("the database went away")
        await real(conn, rows)

    monkeypatch.setattr(store, "insert_messages", flaky)
    async with port_app(db_url, tmp_path) as app, client_for(app) as c:
        rt = app.state.runtime
        out = await local_import(app, c.user_id, DATA / "chatgpt.json")
        with pytest.raises(RuntimeError):
            await importer.run_import(rt.db, rt.settings, out["id"])
        assert set(await _by_source(app, c.user_id)) == {"conv-branch"}
        assert await _count(app, t.conversations, user_id=c.user_id) == 1
        assert await _count(app, t.messages, user_id=c.user_id) == 9
        row = (await c.get(f"/api/imports/{out['id']}")).json()
        assert row["status"] == "running" and row["conversations_processed"] == 1
        done = await importer.run_import(rt.db, rt.settings, out["id"])  # the job's retry
        assert done["status"] == "done" and done["report"]["conversations"]["imported"] == 2
        assert await _count(app, t.messages, user_id=c.user_id) == 14

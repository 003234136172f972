"""Exports on SQLite and PostgreSQL: a conversation as chatmem JSON (the whole tree) whose
import rebuilds the same tree, Markdown and printable HTML of the active path, memories with
their history, the "all my data" archive built by a job (and importable as it is), privacy."""

from __future__ import annotations

import io
import json
import zipfile

from tests.port_support import (
    DATA,
    client_for,
    conversations,
    import_file,
    messages,
    port_app,
    run_jobs,
)


def canonical(conv, rows) -> dict:
    """A conversation's tree without ids: each node's content and its children in order."""
    kids: dict = {}
    for r in rows:
        kids.setdefault(r.parent_id, []).append(r)

    def node(r) -> dict:
        children = sorted(kids.get(r.id, []), key=lambda x: (x.created_at, x.depth))
        return {
            "role": r.role,
            "blocks": r.blocks,
            "created_at": r.created_at,
            "model_id": r.model_id,
            "status": r.status,
            "depth": r.depth,
            "leaf": r.id == conv.active_leaf_id,
            "children": [node(c) for c in children],
        }

    roots = sorted(kids.get(None, []), key=lambda x: x.created_at)
    return {
        "title": conv.title,
        "created_at": conv.created_at,
        "model_id": conv.model_id,
        "message_count": conv.message_count,
        "flags": (conv.pinned, conv.starred, conv.archived),
        "tree": [node(r) for r in roots],
    }


async def _trees(app, user_id) -> list:
    out = [
        canonical(conv, await messages(app, conv.id)) for conv in await conversations(app, user_id)
    ]
    return sorted(out, key=lambda x: x["title"])


async def test_json_export_then_import_is_the_same_tree(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a, client_for(app) as b:
        for name in ("chatgpt.json", "claude.json", "openwebui.json", "librechat_flat.json"):
            await import_file(app, a, DATA / name)
        originals = await _trees(app, a.user_id)
        assert len(originals) == 7
        for conv in await conversations(app, a.user_id):
            r = await a.get(f"/api/conversations/{conv.id}/export", params={"format": "json"})
            assert r.status_code == 200 and r.headers["content-type"] == "application/json"
            assert "attachment" in r.headers["content-disposition"]
            doc = r.json()
            assert doc["format"] == "chatmem" and len(doc["conversations"][0]["messages"]) == (
                conv.message_count
            )
            rep = await import_file(app, b, r.content, name="export.json")
            assert rep["format"] == "chatmem", rep
            assert rep["report"]["conversations"]["imported"] == 1, rep
        assert await _trees(app, b.user_id) == originals
        # the same file again, or into the account it came from: nothing new
        conv = (await conversations(app, a.user_id))[0]
        body = (await a.get(f"/api/conversations/{conv.id}/export")).content
        rep = await import_file(app, a, body)
        assert rep["report"]["conversations"] == {
            "imported": 0,
            "updated": 0,
            "unchanged": 1,
            "failed": 0,
            "empty": 0,
        }
        rep = await import_file(app, b, body)
        assert rep["report"]["conversations"]["unchanged"] == 1


async def test_markdown_and_html_show_the_active_path(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a:
        await import_file(app, a, DATA / "chatgpt.json")
        conv = next(x for x in await conversations(app, a.user_id) if x.title == "Trip planning")
        r = await a.get(f"/api/conversations/{conv.id}/export", params={"format": "markdown"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
        md = r.text
        assert md.startswith("# Trip planning")
        assert "Regenerated: Day 1 gardens" in md and "Day 1: temples" not in md  # the leaf's path
        assert "Osaka" not in md  # another root branch
        assert "**Tool call** `python`" in md and "1024" in md and "> **Thinking**" in md
        assert "📎 kyoto.png" in md and "2023-11-14" in md

        await a.post(
            f"/api/conversations/{conv.id}/messages",
            json={"content": "<script>alert(1)</script> **bold**", "generate": False},
        )
        r = await a.get(f"/api/conversations/{conv.id}/export", params={"format": "html"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "script-src" not in r.headers["content-security-policy"]
        assert "default-src 'none'" in r.headers["content-security-policy"]
        page = r.text
        assert "<script>" not in page and "&lt;script&gt;" in page
        assert "<strong>bold</strong>" in page and "@media print" in page
        assert "Day 1: temples" not in page and "Regenerated" in page


async def test_memories_export_has_their_history(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a, client_for(app) as b:
        r = await a.post("/api/me/memories", json={"memory_text": "I live in Oslo"})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        r = await a.patch(f"/api/me/memories/{mid}", json={"memory_text": "I live in Bergen"})
        assert r.status_code == 200, r.text
        doc = (await a.get("/api/exports/memories")).json()
        assert doc["format"] == "chatmem.memories"
        [m] = doc["memories"]
        assert m["memory_text"] == "I live in Bergen"
        assert [e["event"] for e in m["history"]][:1] == ["created"] and len(m["history"]) >= 2
        assert (await b.get("/api/exports/memories")).json()["memories"] == []


async def test_all_my_data_archive(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a, client_for(app) as b:
        await import_file(app, a, DATA / "chatgpt.json")
        await a.post("/api/me/memories", json={"memory_text": "I like tea"})
        await a.post("/api/projects", json={"name": "Travel"})
        r = await a.post("/api/agents", json={"name": "Guide", "handle": "guide"})
        assert r.status_code == 201, r.text
        conv = next(x for x in await conversations(app, a.user_id) if x.title == "Trip planning")
        r = await a.post(
            f"/api/conversations/{conv.id}/messages/{conv.active_leaf_id}/feedback",
            json={"feedback": "like"},
        )
        assert r.status_code == 200, r.text
        r = await a.post("/api/user-feedback", data={"description": "the map is wrong"})
        assert r.status_code == 201, r.text
        r = await a.post("/api/exports")
        assert r.status_code == 202 and r.json()["status"] == "queued"
        eid = r.json()["id"]
        early = await a.get(f"/api/exports/{eid}/download")
        assert early.status_code == 409
        await run_jobs(app, kinds=("export.archive",))
        info = (await a.get(f"/api/exports/{eid}")).json()
        assert info["status"] == "done" and info["download_url"].endswith("/download")
        assert info["counts"]["conversations"] == 2 and info["counts"]["messages"] == 14
        assert info["counts"]["memories"] == 1 and info["counts"]["projects"] == 1
        assert (await b.get(f"/api/exports/{eid}")).status_code == 404
        assert (await b.get(f"/api/exports/{eid}/download")).status_code == 404
        r = await a.get(f"/api/exports/{eid}/download")
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        z = zipfile.ZipFile(io.BytesIO(r.content))
        names = set(z.namelist())
        for n in (
            "README.txt",
            "account.json",
            "conversations.json",
            "memories.json",
            "agents.json",
            "projects.json",
            "feedback.json",
        ):
            assert n in names
        assert sum(1 for n in names if n.startswith("conversations/") and n.endswith(".md")) == 2
        account = json.loads(z.read("account.json"))
        assert account["email"] == a.email and "password_hash" not in account
        assert json.loads(z.read("memories.json"))["memories"][0]["memory_text"] == "I like tea"
        memory = json.loads(z.read("memories.json"))["memories"][0]
        assert memory["history"] and memory["history"][0]["event"] == "created"
        assert [x["name"] for x in json.loads(z.read("agents.json"))] == ["Guide"]
        assert [x["name"] for x in json.loads(z.read("projects.json"))] == ["Travel"]
        feedback = json.loads(z.read("feedback.json"))
        assert [x["rating"] for x in feedback["ratings"]] == ["like"]
        assert [x["description"] for x in feedback["reports"]] == ["the map is wrong"]
        assert info["counts"]["agents"] == 1 and info["counts"]["feedback"] == 2
        # the archive imports as it is, into another account
        rep = await import_file(app, b, r.content, name="chatmem-export.zip")
        assert rep["format"] == "chatmem" and rep["report"]["conversations"]["imported"] == 2
        assert await _trees(app, b.user_id) == await _trees(app, a.user_id)


async def test_exports_are_private(db_url, tmp_path):
    async with port_app(db_url, tmp_path) as app, client_for(app) as a, client_for(app) as b:
        await import_file(app, a, DATA / "claude.json")
        conv = (await conversations(app, a.user_id))[0]
        for fmt in ("json", "markdown", "html"):
            r = await b.get(f"/api/conversations/{conv.id}/export", params={"format": fmt})
            assert r.status_code == 404
        r = await a.get(f"/api/conversations/{conv.id}/export", params={"format": "pdf"})
        assert r.status_code == 422

"""The memory library and "what the model saw" in a real browser against a real server.

Same fixtures and looks as tests/test_web_app.py (desktop light and 390 px dark). The key flow —
a memory edited in the library changes what the next answer's context contains — also runs on
each database (the PostgreSQL run starts its own server).
"""

from __future__ import annotations

import sqlite3
import time
import uuid

import httpx
import pytest

from .browser import (
    LOOK_IDS,
    LOOKS,
    new_page,
    no_horizontal_scroll,
    open_sidebar_if_narrow,
    shot,
    unnamed_controls,
)
from .servers import Server, create_user
from .test_web_app import ENV, PASSWORD, User, browser, done, eventually, server, user, wait_answer

pytestmark = pytest.mark.slow
__all__ = ["browser", "server", "user"]  # module fixtures shared with test_web_app


def remember(u: User, text: str, **extra) -> dict:
    r = u.api.post("/api/me/memories", json={"memory_text": text, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def card(page, text: str):
    return page.locator(".mem-card", has_text=text)


def edit_memory(page, old: str, new: str) -> None:
    card(page, old).get_by_role("button", name="Edit").click()
    box = page.get_by_role("dialog", name="Edit memory").get_by_label("What to remember")
    box.fill(new)
    page.get_by_role("dialog", name="Edit memory").get_by_role("button", name="Save").click()
    card(page, new).wait_for()


def check_edit_changes_next_context(page, u: User, look) -> None:
    """Edit in the library → the next-turn preview and the next answer's report carry the new
    text, not the old one."""
    remember(u, "My favourite colour is teal", memory_type="preference", importance=4)
    c = u.conversation("Colours", ("Hello", "Hi there."))
    page.goto("/memories")
    card(page, "teal").wait_for()
    assert "In use" in card(page, "teal").inner_text()
    edit_memory(page, "My favourite colour is teal", "My favourite colour is orange")
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant", has_text="Hi there.").wait_for()
    page.get_by_role("button", name="Context of the next message").click()
    panel = page.locator("dialog.context-panel")
    panel.locator(".ctx-memories li", has_text="orange").wait_for()
    assert "teal" not in panel.inner_text()
    assert panel.locator("tr[data-section=memories]").count() == 1
    shot(page, "context-preview", look)
    panel.get_by_role("button", name="Close").click()
    page.locator("#composer-input").fill("What colour do I like?")
    page.locator("#composer-input").press("Enter")
    wait_answer(page, 2)
    last = page.locator(".msg.assistant").last
    last.locator("button.mem-used").click()  # "1" beside its icon: the answer's own stored report
    panel = page.locator("dialog.context-panel")
    panel.locator(".ctx-memories li", has_text="orange").wait_for()
    assert "teal" not in panel.inner_text()
    assert "What the model saw" in panel.inner_text()
    shot(page, "context-answer", look)
    panel.get_by_role("button", name="Close").click()


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_library_edit_changes_the_next_context(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    check_edit_changes_next_context(page, user, look)
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_library_fields_filters_disable_delete_undo_purge_history(browser, server, user, look):
    a = remember(user, "I live in Lisbon", memory_type="fact", importance=5)
    remember(user, "I prefer short answers", memory_type="preference")
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/")
    open_sidebar_if_narrow(page, look)
    page.get_by_role("link", name="Memory").click()
    card(page, "Lisbon").wait_for()
    text = card(page, "Lisbon").inner_text()
    for field in (
        "Status",
        "In use",
        "Type",
        "fact",
        "Importance",
        "Confidence",
        "Valid",
        "★★★★★",
    ):
        assert field in text, field
    assert "All chats (user-wide)" in text
    assert not unnamed_controls(page)
    no_horizontal_scroll(page)
    shot(page, "memory-library", look)

    # filters: text and type
    page.get_by_placeholder("Search memories").fill("short")
    card(page, "Lisbon").wait_for(state="detached")
    card(page, "short answers").wait_for()
    page.get_by_placeholder("Search memories").fill("")
    card(page, "Lisbon").wait_for()
    page.get_by_placeholder("Type").fill("preference")
    card(page, "Lisbon").wait_for(state="detached")
    page.get_by_placeholder("Type").fill("")

    # add with a validity window
    page.get_by_role("button", name="Add memory").click()
    dlg = page.get_by_role("dialog", name="Add a memory")
    dlg.get_by_label("What to remember").fill("I am on holiday in Japan")
    dlg.get_by_label("Valid from").fill("2026-07-01")
    dlg.get_by_label("Valid until").fill("2026-06-01")
    dlg.get_by_role("button", name="Save").click()
    dlg.get_by_role("alert").wait_for()  # until before from: refused in the page
    dlg.get_by_label("Valid until").fill("2026-07-20")
    dlg.get_by_role("button", name="Save").click()
    card(page, "holiday in Japan").wait_for()
    assert "2026-07-01 – 2026-07-20" in card(page, "holiday in Japan").inner_text()

    # disable / enable, and the status filter
    card(page, "Lisbon").get_by_role("button", name="Turn off").click()
    card(page, "Lisbon").locator(".mem-status", has_text="Turned off").wait_for()
    page.locator(".mem-filters select").first.select_option("DISABLED")
    card(page, "short answers").wait_for(state="detached")
    card(page, "Lisbon").wait_for()
    page.locator(".mem-filters select").first.select_option("")
    card(page, "Lisbon").get_by_role("button", name="Turn on").click()
    card(page, "Lisbon").locator(".mem-status", has_text="In use").wait_for()

    # history: created, disabled, enabled
    card(page, "Lisbon").get_by_role("button", name="History").click()
    hist = page.get_by_role("dialog", name="History")
    hist.locator(".mem-events li").nth(2).wait_for()
    events = hist.inner_text()
    assert "created" in events and "disabled" in events and "enabled" in events
    hist.get_by_role("button", name="Close").click()

    # delete with undo: nothing reaches the server until the undo window passes
    card(page, "short answers").get_by_role("button", name="More actions").click()
    page.get_by_role("menuitem", name="Delete").click()
    card(page, "short answers").wait_for(state="detached")
    page.locator(".undo-bar").get_by_role("button", name="Undo").click()
    card(page, "short answers").wait_for()
    card(page, "short answers").get_by_role("button", name="More actions").click()
    page.get_by_role("menuitem", name="Delete").click()
    page.locator(".undo-bar").wait_for(state="detached", timeout=15_000)
    left = lambda: [m["memory_text"] for m in user.api.get("/api/me/memories").json()["items"]]  # noqa: E731
    assert eventually(lambda: "I prefer short answers" not in left())

    # purge: a clear warning first
    card(page, "Lisbon").get_by_role("button", name="More actions").click()
    page.get_by_role("menuitem", name="Purge").click()
    warn = page.get_by_role("dialog", name="Purge this memory for good?")
    assert "cannot be undone" in warn.inner_text()
    shot(page, "memory-purge", look)
    warn.get_by_role("button", name="Purge").click()
    card(page, "Lisbon").wait_for(state="detached")
    assert user.api.get(f"/api/me/memories/{a['id']}").status_code == 404
    done(page, console)


def test_memory_switch_and_conflict_side_by_side(browser, server, user):
    look = ("desktop", "light")
    x = remember(user, "I work at Acme", slot="employer", value="acme")
    y = remember(user, "I work at Globex", slot="employer", value="globex")
    db = sqlite3.connect(server.db_url.removeprefix("sqlite:///"))
    with db:
        db.execute(
            "UPDATE memories SET status = 'UNKNOWN_CURRENT' WHERE id IN (?, ?)",
            (x["id"], y["id"]),
        )
    db.close()
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/memories")
    conflict = page.locator(".mem-conflict")
    conflict.wait_for()
    assert "Acme" in conflict.inner_text() and "Globex" in conflict.inner_text()
    shot(page, "memory-conflict", look)
    conflict.locator(".mem-side", has_text="Globex").get_by_role(
        "button", name="Keep this one"
    ).click()
    conflict.wait_for(state="detached")
    card(page, "Globex").locator(".mem-status", has_text="In use").wait_for()
    status = {m["id"]: m["status"] for m in user.api.get("/api/me/memories").json()["items"]}
    assert status[y["id"]] == "ACTIVE" and status.get(x["id"]) != "UNKNOWN_CURRENT"

    switch = page.get_by_role("switch")
    assert switch.is_checked()
    switch.uncheck()
    page.locator(".notice", has_text="Memory is off").wait_for()
    assert eventually(lambda: not user.api.get("/api/me").json()["settings"]["memory_enabled"])
    switch.check()
    assert eventually(lambda: user.api.get("/api/me").json()["settings"]["memory_enabled"])
    done(page, console)


def test_editing_the_text_leaves_a_precise_validity_window_alone(browser, server, user):
    """The editor's date fields show whole days. Saving a new text with the dates untouched used
    to send them back as midnight UTC: a memory valid for the next three hours then ended at the
    start of today, already over, with no date changed by the user."""
    look = ("desktop", "light")
    now = int(time.time() * 1000)
    m = remember(user, "I am in Tokyo for a few hours", valid_until=now + 3 * 3600 * 1000)
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/memories")
    card(page, "Tokyo").wait_for()
    edit_memory(page, "I am in Tokyo for a few hours", "I am in Shinjuku for a few hours")
    after = user.api.get(f"/api/me/memories/{m['id']}").json()
    assert after["memory_text"] == "I am in Shinjuku for a few hours"
    assert (after["valid_from"], after["valid_until"]) == (m["valid_from"], m["valid_until"])
    done(page, console)


def test_memory_edit_changes_the_next_context_on_each_database(browser, db_url):
    s = Server(db_url, env_extra=ENV, args=()).start()
    try:
        email = f"lib-{uuid.uuid4().hex[:6]}@example.com"
        key = create_user(db_url, email, password=PASSWORD)
        u = User(s, email, key)
        look = ("desktop", "light")
        ctx, page, console = new_page(browser, s.base, look, login=(email, PASSWORD))
        check_edit_changes_next_context(page, u, look)
        done(page, console)
    finally:
        s.stop()


def test_memory_patch_validity_on_each_database(db_url):
    """The API piece the editor needed: PATCH sets and clears the validity window, and refuses
    an end before the start (nothing changed)."""
    s = Server(db_url).start()
    try:
        key = create_user(db_url, f"v-{uuid.uuid4().hex[:6]}@example.com")
        api = httpx.Client(base_url=s.base, headers={"Authorization": f"Bearer {key}"})
        m = api.post("/api/me/memories", json={"memory_text": "On a trip"}).json()
        r = api.patch(f"/api/me/memories/{m['id']}", json={"valid_from": 1000, "valid_until": 5000})
        assert r.status_code == 200 and (r.json()["valid_from"], r.json()["valid_until"]) == (
            1000,
            5000,
        )
        bad = api.patch(f"/api/me/memories/{m['id']}", json={"valid_until": 10})
        assert bad.status_code == 422
        assert api.get(f"/api/me/memories/{m['id']}").json()["valid_until"] == 5000
        r = api.patch(f"/api/me/memories/{m['id']}", json={"valid_until": None})
        assert r.status_code == 200 and r.json()["valid_until"] is None
        events = api.get(f"/api/me/memories/{m['id']}/history").json()["events"]
        assert [e["event"] for e in events].count("edited") == 2
    finally:
        s.stop()

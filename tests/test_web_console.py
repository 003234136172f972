"""Settings (API keys, memory switch, data export, account deletion), companions, the admin
console and "report a problem" in a real browser against a real server.

Same fixtures and looks as tests/test_web_app.py (desktop light and 390 px dark); screenshots
land in tests/artifacts/web/. The admin pages are refused to a non-admin by the server (403)
and the page says it cannot be opened; the API tests of the same routes on both databases are
in tests/test_admin_console.py.
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
from .servers import create_user
from .test_web_app import PASSWORD, User, browser, done, eventually, server, user, wait_answer

pytestmark = pytest.mark.slow
__all__ = ["browser", "server", "user"]  # module fixtures shared with test_web_app


@pytest.fixture
def admin(server):
    email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    key = create_user(server.db_url, email, password=PASSWORD, admin=True)
    return User(server, email, key)


def check_page(page) -> None:
    assert not unnamed_controls(page), unnamed_controls(page)
    no_horizontal_scroll(page)


# ── settings ────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_settings_api_keys_memory_switch_and_export(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/")
    open_sidebar_if_narrow(page, look)
    page.get_by_role("link", name="Settings").click()
    keys = page.locator("section", has=page.get_by_role("heading", name="API keys"))
    keys.get_by_text("default").wait_for()
    keys.get_by_label("Key name").fill("laptop script")
    keys.get_by_role("button", name="Create key").click()
    secret = keys.locator("code.secret").inner_text()
    assert secret and "not be shown again" in keys.inner_text()
    keys.locator("li", has_text="laptop script").wait_for()
    check_page(page)
    shot(page, "settings-keys", look)
    r = httpx.get(f"{server.base}/api/me", headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 200 and r.json()["email"] == user.email

    page.reload()  # shown once: gone after a reload
    keys.locator("li", has_text="laptop script").wait_for()
    assert keys.locator("code.secret").count() == 0
    keys.get_by_role("button", name="Revoke laptop script").click()
    dlg = page.get_by_role("dialog", name="Revoke this key?")
    dlg.get_by_role("button", name="Revoke").click()
    keys.locator("li.revoked", has_text="laptop script").wait_for()
    r = httpx.get(f"{server.base}/api/me", headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 401

    mem = page.locator("section", has=page.get_by_role("heading", name="Memory"))
    switch = mem.get_by_role("switch")
    assert switch.is_checked()
    switch.uncheck()
    assert eventually(lambda: not user.api.get("/api/me").json()["settings"]["memory_enabled"])
    switch.check()
    assert eventually(lambda: user.api.get("/api/me").json()["settings"]["memory_enabled"])

    data = page.locator("section", has=page.get_by_role("heading", name="Your data"))
    data.get_by_role("button", name="Prepare my data").click()
    link = data.get_by_role("link", name="Download")
    link.wait_for(timeout=60_000)
    href = link.get_attribute("href")
    got = user.api.get(href)
    assert got.status_code == 200 and got.content[:2] == b"PK"  # a zip
    data.get_by_role("button", name="Delete my account").scroll_into_view_if_needed()
    shot(page, "settings-data", look)
    done(page, console)


def test_delete_account_from_settings(browser, server):
    email = f"bye-{uuid.uuid4().hex[:6]}@example.com"
    key = create_user(server.db_url, email, password=PASSWORD)
    look = ("desktop", "light")
    ctx, page, console = new_page(browser, server.base, look, login=(email, PASSWORD))
    page.goto("/settings")
    page.get_by_role("button", name="Delete my account").click()
    dlg = page.get_by_role("dialog", name="Delete my account")
    confirm = dlg.get_by_role("button", name="Delete everything")
    assert confirm.is_disabled()
    dlg.get_by_role("textbox").fill("someone-else@example.com")
    assert confirm.is_disabled()
    dlg.get_by_role("textbox").fill(email)
    shot(page, "settings-delete-account", look)
    confirm.click()
    page.wait_for_url("**/login**")
    r = httpx.get(f"{server.base}/api/me", headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 401
    console.allow(r"401 \(Unauthorized\)")
    done(page, console)


# ── companions ──────────────────────────────────────────────────────────────────────────────


def agent(u: User, name: str, **extra) -> dict:
    r = u.api.post("/api/agents", json={"name": name, "handle": name.lower(), **extra})
    assert r.status_code == 201, r.text
    return r.json()


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_companion_persona_inbox_chat_and_memories(browser, server, user, look):
    older = agent(user, "Juniper", opening_message="Hi, I am Juniper. How was the hike?")
    time.sleep(0.01)
    agent(user, "Basil", headline="A calm cook")
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/")
    open_sidebar_if_narrow(page, look)
    page.get_by_role("link", name="Companions").click()

    # create: every field of the contract, each with its limit shown
    page.get_by_role("button", name="New companion").click()
    ed = page.get_by_role("dialog", name="New companion")
    for label, limit in (
        ("Name", 120),
        ("Handle", 120),
        ("Headline", 200),
        ("Description", 2000),
        ("Opening message", 2000),
        ("Personality", 4000),
        ("Tone of voice", 4000),
        ("Story and background", 4000),
        ("Guardrails (what it must not do)", 4000),
        ("Default instructions", 4000),
        ("Image (URL or key)", 500),
    ):
        box = ed.get_by_label(label, exact=True)
        assert box.get_attribute("maxlength") == str(limit), label
        assert (
            f"up to {limit} characters"
            in ed.locator(f"#{box.get_attribute('aria-describedby')}").inner_text()
        )
    ed.get_by_label("Visibility").select_option("private")
    ed.get_by_label("Status").select_option("published")
    ed.get_by_label("Name", exact=True).fill("Rosemary")
    ed.get_by_label("Handle", exact=True).fill("rosemary")
    ed.get_by_label("Personality").fill("Warm and curious.")
    assert "17 / 4000" in ed.inner_text()
    shot(page, "companion-editor", look)
    ed.get_by_role("button", name="Save").click()
    page.wait_for_function("() => location.pathname.startsWith('/companions/agt_')")
    made = [a for a in user.api.get("/api/agents").json()["items"] if a["name"] == "Rosemary"]
    assert made and made[0]["personality_prompt"] == "Warm and curious."

    # Juniper's default conversation opens with its opening message; a reply moves it up
    page.goto(f"/companions/{older['id']}")
    page.locator(".opening-message", has_text="How was the hike?").wait_for()
    page.locator("#composer-input").fill("It was long but lovely")
    page.locator("#composer-input").press("Enter")
    wait_answer(page, 1)
    check_page(page)
    shot(page, "companion-chat", look)
    page.goto("/companions")
    first = page.locator(".inbox-item").first
    first.get_by_text("Juniper").wait_for()
    reply = user.api.get(f"/api/agents/{older['id']}").json()["last_assistant_message"]
    assert reply and reply[:30] in first.inner_text()
    assert "A calm cook" in page.locator(".inbox-item", has_text="Basil").inner_text()
    check_page(page)
    shot(page, "companion-inbox", look)

    # edit the persona from the inbox
    page.get_by_role("button", name="Edit persona: Basil").click()
    ed = page.get_by_role("dialog", name="Edit persona")
    assert ed.get_by_label("Headline").input_value() == "A calm cook"
    ed.get_by_label("Headline").fill("A calm cook from Lyon")
    ed.get_by_role("button", name="Save").click()
    page.locator(".inbox-item", has_text="from Lyon").wait_for()

    # per-companion memories: the library opens filtered to it
    for body in (
        {"memory_text": "Hikes on Sundays", "agent_id": older["id"]},
        {"memory_text": "Lives by the sea"},
    ):
        r = user.api.post("/api/me/memories", json=body)
        assert r.status_code == 201, r.text
    page.get_by_role("link", name="Memories: Juniper").click()
    page.locator(".mem-card", has_text="Hikes on Sundays").wait_for()
    assert page.locator(".mem-card", has_text="Lives by the sea").count() == 0
    done(page, console)


# ── admin ───────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_a_non_admin_cannot_open_an_admin_page(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    for path in ("/admin", "/admin/users", "/admin/usage", "/admin/jobs"):
        page.goto(path)
        page.get_by_role("alert").filter(has_text="for administrators").wait_for()
        assert page.locator(".user-row, .usage-chart, .job").count() == 0
    open_sidebar_if_narrow(page, look)
    assert page.get_by_role("link", name="Admin").count() == 0
    shot(page, "admin-refused", look)
    for path in ("/api/admin/users", "/api/admin/usage", "/api/admin/ratings", "/api/admin/jobs"):
        assert user.api.get(path).status_code == 403
    done(page, console)


def report_with_screenshot(page, text: str) -> None:
    page.get_by_role("button", name="Report a problem").click()
    dlg = page.get_by_role("dialog", name="Report a problem")
    dlg.get_by_label("What went wrong?").fill(text)
    box = dlg.get_by_label("Attach a screenshot of this page")
    page.wait_for_function(
        "() => !document.querySelector('.report-dialog input[type=checkbox]').disabled"
    )
    box.check()
    dlg.locator("img.report-preview").wait_for()
    dlg.get_by_role("button", name="Send report").click()
    page.locator(".toast", has_text="the report was sent").wait_for()


def fail_a_job(server, kind: str) -> str:
    jid = f"job_{uuid.uuid4().hex}"
    db = sqlite3.connect(server.db_url.removeprefix("sqlite:///"))
    now = int(time.time() * 1000)
    with db:
        db.execute(
            "INSERT INTO jobs (id, kind, payload, status, run_after, attempts, max_attempts,"
            " locked_by, last_error, created_at, updated_at)"
            " VALUES (?, ?, '{}', 'failed', ?, 5, 5, '', 'RuntimeError: upstream said no', ?, ?)",
            (jid, kind, now, now, now),
        )
    db.close()
    return jid


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_admin_console(browser, server, admin, user, look):
    c = user.conversation("Rated", ("Capital of Australia?", "Sydney."))
    mid = user.messages(c["id"])[-1]["id"]
    r = user.api.post(
        f"/api/conversations/{c['id']}/messages/{mid}/feedback",
        json={"feedback": "dislike", "reasons": ["incorrect_fact"], "comment": "It is Canberra"},
    )
    assert r.status_code == 200, r.text
    kind = f"test.never-handled-{uuid.uuid4().hex[:6]}"
    jid = fail_a_job(server, kind)

    # the user reports a problem with a screenshot captured in the browser
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant", has_text="Sydney.").wait_for()
    open_sidebar_if_narrow(page, look)
    report_with_screenshot(page, "The answer about Australia is wrong")
    shot(page, "report-sent", look)
    done(page, console)

    ctx, page, console = new_page(browser, server.base, look, login=admin.login)
    page.goto("/")
    open_sidebar_if_narrow(page, look)
    page.get_by_role("link", name="Admin").click()
    # users: create, make admin, disable, login link, reset password
    page.locator(".user-row", has_text=user.email).wait_for()
    new_email = f"made-{uuid.uuid4().hex[:6]}@example.com"
    form = page.get_by_role("form", name="Create user")
    form.get_by_label("Email").fill(new_email)
    form.get_by_label("Name").fill("Made Here")
    form.get_by_role("button", name="Create user").click()
    row = page.locator(".user-row", has_text=new_email)
    row.get_by_role("button", name="Make admin").click()
    row.get_by_role("button", name="Remove admin").wait_for()
    row.get_by_role("button", name="Disable").click()
    row.get_by_role("button", name="Enable").wait_for()
    listed = {u["email"]: u for u in admin.api.get("/api/admin/users").json()["items"]}
    assert listed[new_email]["role"] == "admin" and listed[new_email]["disabled"] is True
    row.get_by_role("button", name="Enable").click()
    row.get_by_role("button", name="Disable").wait_for()
    row.get_by_role("button", name="Login link").click()
    link = page.get_by_role("dialog", name="Login link").locator("code.secret").inner_text()
    assert "/api/auth/magic?token=" in link
    page.get_by_role("dialog", name="Login link").get_by_role("button", name="Close").click()
    row.get_by_role("button", name="Reset password").click()
    dlg = page.get_by_role("dialog", name="Reset password")
    dlg.get_by_label(f"New password for {new_email}").fill("a brand new password")
    dlg.get_by_role("button", name="Reset password").click()
    page.locator(".toast", has_text="Password reset").wait_for()
    login = {"email": new_email, "password": "a brand new password"}
    assert httpx.post(f"{server.base}/api/auth/login", json=login).status_code == 200
    check_page(page)
    shot(page, "admin-users", look)

    # usage: a chart, by model and by user
    page.get_by_role("link", name="Usage").click()
    chart = page.locator(".usage-chart svg")
    chart.wait_for()
    page.locator(".admin-filters select").nth(1).select_option("answers")  # demo turns cost $0
    chart.locator("rect").first.wait_for()
    page.locator(".admin-filters select").nth(2).select_option("user")
    page.locator(".legend li", has_text=user.email).wait_for()
    check_page(page)
    shot(page, "admin-usage", look)

    # ratings by model with reasons
    page.get_by_role("link", name="Ratings").click()
    page.locator(".ratings-table td", has_text="Incorrect facts").first.wait_for()
    page.locator(".rating-list li", has_text="It is Canberra").filter(
        has_text=user.email
    ).wait_for()
    shot(page, "admin-ratings", look)

    # problem reports with their screenshots
    page.get_by_role("link", name="Problem reports").click()
    rep = page.locator(".report", has_text="The answer about Australia is wrong").filter(
        has_text=user.email
    )
    img = rep.locator(".report-shot img")
    img.wait_for()
    page.wait_for_function(
        "el => el.complete && el.naturalWidth > 0", arg=img.element_handle(), timeout=20_000
    )
    width = img.evaluate("el => el.naturalWidth")
    assert width == (1280 if look[0] == "desktop" else 390)
    assert f"/c/{c['id']}" in rep.inner_text()
    check_page(page)
    shot(page, "admin-reports", look)

    # jobs: the failed one with its error, retried
    page.get_by_role("link", name="Jobs").click()
    job = page.locator(f".job[data-job='{jid}']")
    job.get_by_text("upstream said no").wait_for()
    shot(page, "admin-jobs", look)
    job.get_by_role("button", name=f"Retry {kind}").click()
    job.wait_for(state="detached")  # it left the failed list
    got = [j for j in admin.api.get("/api/admin/jobs").json()["items"] if j["id"] == jid]
    assert got[0]["status"] == "queued" and got[0]["attempts"] == 0
    done(page, console)

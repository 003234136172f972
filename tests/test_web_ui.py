"""The web UI in a real browser (Debian's Chromium driven by Playwright) against a real server."""

from __future__ import annotations

import os
import shutil

import httpx
import pytest

from .servers import Server, create_user

CHROMIUM = os.environ.get("CHATMEM_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        # never a silent skip: `make test` installs Debian's chromium when it can (root + apt)
        raise RuntimeError(
            f"{CHROMIUM} is required for the browser tests "
            "(apt-get install chromium, or set CHATMEM_TEST_CHROMIUM)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def server(db_url):
    s = Server(db_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "5"}).start()
    yield s
    s.stop()


def test_login_browse_switch_branch_logout(browser, server, db_url):
    key = create_user(db_url, "web@example.com", password="s3cret-pass")
    api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"})
    cid = api.post("/api/conversations", json={"title": "Branchy"}).json()["id"]
    q = api.post(
        f"/api/conversations/{cid}/messages", json={"content": "Question?", "generate": False}
    ).json()
    api.post(
        f"/api/conversations/{cid}/messages", json={"content": "First answer", "role": "assistant"}
    )
    api.post(
        f"/api/conversations/{cid}/messages",
        json={"content": "Second answer", "role": "assistant", "parent_id": q["id"]},
    )

    page = browser.new_page()
    page.goto(server.base + "/")
    page.fill("input[name=email]", "web@example.com")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    page.wait_for_selector("#login-error:has-text('Wrong')")
    page.fill("input[name=password]", "s3cret-pass")
    page.click("button[type=submit]")
    page.wait_for_selector("#conversations li:has-text('Branchy')")
    assert page.is_hidden("#login") and page.is_visible("#composer")  # the form really goes away
    page.wait_for_selector(".msg.assistant:has-text('Second answer')")
    assert page.inner_text(".msg.assistant .branch-pos") == "2/2"
    page.click(".msg.assistant .branch-prev")
    page.wait_for_selector(".msg.assistant:has-text('First answer')")
    assert page.inner_text(".msg.assistant .branch-pos") == "1/2"
    # the switch was a cookie-authenticated write: it went through with the CSRF header
    assert api.get(f"/api/conversations/{cid}").json()["active_leaf_id"] != q["id"]
    page.click("#logout")
    page.wait_for_selector("#login-form")
    assert page.is_hidden("#app")
    page.reload()
    page.wait_for_selector("#login-form")
    page.close()


def test_send_stream_reload_midstream_and_resume(browser, db_url):
    server = Server(
        db_url, env_extra={"CHATMEM_DEMO_DELAY_MS": "60", "CHATMEM_DEMO_MIN_TOKENS": "60"}
    ).start()
    try:
        key = create_user(db_url, "stream@example.com", password="pw-stream-1")
        api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"})
        page = browser.new_page()
        page.goto(server.base + "/")
        page.fill("input[name=email]", "stream@example.com")
        page.fill("input[name=password]", "pw-stream-1")
        page.click("button[type=submit]")
        page.wait_for_selector("#composer textarea")
        page.fill("#composer textarea", "Tell me about tide pools")
        page.click("#send")
        page.wait_for_selector(".msg.assistant.streaming")
        # close the tab's stream mid-answer: the server keeps generating
        page.reload()
        page.wait_for_selector(".msg.user:has-text('Tell me about tide pools')")
        page.wait_for_selector(".msg.assistant.complete", timeout=60_000)
        shown = page.inner_text(".msg.assistant .text")
        conv = api.get("/api/conversations").json()["items"][0]
        msgs = api.get(f"/api/conversations/{conv['id']}/messages").json()["items"]
        assert msgs[-1]["status"] == "complete"
        assert shown == msgs[-1]["text"] and "tide pools" in shown
        # regenerate from the UI makes a second variant and shows 2/2
        page.click(".msg.assistant button:has-text('Regenerate')")
        page.wait_for_selector(".msg.assistant .branch-pos:has-text('2/2')", timeout=60_000)
        page.wait_for_selector(".msg.assistant.complete", timeout=60_000)
        page.close()
    finally:
        server.stop()

"""The web app in a real browser (Debian's Chromium under Playwright) against a real server.

One ``chatmem serve`` (with its job worker, so titles get generated) serves the whole module on
SQLite; each flow runs at 1280×800 and at 390×844 and, across the two, in light and dark
(``LOOKS``). The PostgreSQL runs of the core chat flow and of the crash/reconnect flow are at the
end. Every page is checked for console errors; screenshots of the main screens land in
tests/artifacts/web/.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import uuid

import httpx
import pytest

from .browser import (
    LOOK_IDS,
    LOOKS,
    emoji_in_chrome,
    launch,
    new_page,
    no_horizontal_scroll,
    open_sidebar_if_narrow,
    session_cookies,
    shot,
    title_room,
    topbar_fits,
    unnamed_controls,
)
from .servers import CHATMEM, Server, chatmem_env, create_user

pytestmark = pytest.mark.slow

PASSWORD = "a good password"
ENV = {
    "CHATMEM_DEMO_DELAY_MS": "45",
    "CHATMEM_DEMO_MIN_TOKENS": "60",
    "CHATMEM_MAX_MESSAGE_BYTES": "20000",
    "CHATMEM_JOB_POLL_INTERVAL_S": "0.2",
    # a second model whose provider cannot be reached (a closed local port): a real error turn
    "CHATMEM_MODELS": json.dumps(
        [
            {"id": "demo", "provider": "demo", "label": "Demo (offline)"},
            {
                "id": "unreachable",
                "provider": "openai",
                "label": "Unreachable",
                "upstream": "gpt-test",
                "options": {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0},
            },
        ]
    ),
    "CHATMEM_DEFAULT_MODEL": "demo",
}
MARKDOWN = """# Tide pools

Tide pools hold **anemones** and [a link](https://example.com/tides).

- starfish
- hermit crabs

| creature | legs |
|---|---|
| starfish | 5 |

```python
def count(legs: int) -> int:
    return legs * 2
```

<img src=x onerror="window.__pwned = 1"> [bad](javascript:window.__pwned=2)
"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, sqlite_template):
    target = tmp_path_factory.mktemp("web") / "chatmem.db"
    shutil.copy(sqlite_template, target)
    s = Server(f"sqlite:///{target}", env_extra=ENV, args=()).start()
    yield s
    s.stop()


class User:
    def __init__(self, server: Server, email: str, key: str):
        self.email = email
        self.login = (email, PASSWORD)
        self.api = httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )

    def conversation(self, title: str, *pairs: tuple[str, str]) -> dict:
        c = self.api.post("/api/conversations", json={"title": title}).json()
        for q, a in pairs:
            self.say(c["id"], q, a)
        return c

    def say(self, cid: str, q: str, a: str | list) -> tuple[dict, dict]:
        u = self.api.post(
            f"/api/conversations/{cid}/messages", json={"content": q, "generate": False}
        ).json()
        r = self.api.post(
            f"/api/conversations/{cid}/messages", json={"content": a, "role": "assistant"}
        ).json()
        return u, r

    def messages(self, cid: str) -> list[dict]:
        return self.api.get(f"/api/conversations/{cid}/messages?limit=200").json()["items"]


@pytest.fixture
def user(server):
    email = f"web-{uuid.uuid4().hex[:8]}@example.com"
    key = create_user(server.db_url, email, password=PASSWORD)
    return User(server, email, key)


def eventually(check, timeout: float = 10.0):
    """Poll ``check()`` until it is truthy (a UI write lands on the server asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def done(page, console, look=None) -> None:
    problems = console.problems()
    page.context.close()
    assert not problems, problems


def wait_answer(page, n: int = 1, timeout: float = 60_000) -> None:
    """Until the page shows n finished answers and nothing streams."""
    page.wait_for_function(
        """n => document.querySelectorAll('.msg.assistant.done, .msg.assistant.stopped').length >= n
             && !document.querySelector('.msg.assistant.streaming, .msg.assistant.connecting')""",
        arg=n,
        timeout=timeout,
    )


def composer(page):
    return page.locator("#composer-input")


def new_chat(page, text: str) -> str:
    """Send the first message of a new chat from /; returns the conversation id from its URL."""
    page.goto("/")
    composer(page).fill(text)
    composer(page).press("Enter")
    page.wait_for_url(re.compile(r"/c/c_"))
    return page.url.rsplit("/", 1)[1]


def more(message, action: str) -> None:
    """A message's less frequent actions are in its "More actions" menu."""
    message.get_by_role("button", name="More actions").click()
    message.page.get_by_role("menuitem", name=action).click()


# ── 5. accounts: login page, logout, password, language ─────────────────────────────────────


def ask_about_selection(page, *, last: bool) -> None:
    """Select the first nine characters of the first (or last) answer's paragraph, as a mouse
    would, and click "Ask about this"."""
    page.evaluate(
        """(last) => {
          const ps = [...document.querySelectorAll('.msg.assistant .md p')];
          const p = last ? ps.pop() : ps[0];
          const r = document.createRange(); r.setStart(p.firstChild, 0); r.setEnd(p.firstChild, 9);
          const s = getSelection(); s.removeAllRanges(); s.addRange(r);
          p.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }""",
        last,
    )
    page.locator(".ask-selection").click()


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_login_logout_and_back_where_you_were(browser, server, user, look):
    cid = user.conversation("Kept place", ("Where was I?", "Right here."))["id"]
    ctx, page, console = new_page(browser, server.base, look)
    page.goto(f"/c/{cid}")
    page.get_by_role("heading", name="Log in to chatmem").wait_for()  # a visitor sees the login
    assert "/login?next=" in page.url
    shot(page, "login", look)
    assert not unnamed_controls(page)
    page.get_by_label("Email").fill(user.email)
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("alert").filter(has_text="Wrong email or password").wait_for()
    console.allow(r"401 \(Unauthorized\)")  # the refused login itself
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.locator(".msg.assistant", has_text="Right here.").wait_for()
    assert page.url.endswith(f"/c/{cid}")  # back where the link pointed
    open_sidebar_if_narrow(page, look)
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="Log in to chatmem").wait_for()
    page.reload()
    page.get_by_role("heading", name="Log in to chatmem").wait_for()
    assert user.api.get("/api/me").status_code == 200  # the API key still works
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_no_password_yet_a_cli_login_link_then_a_first_password(browser, server, look):
    """The first-start admin's way back in: an account without a password, a fresh one-time link
    from `chatmem users login-link`, a first password set in settings (no current one asked),
    then an ordinary login with it after logging out."""
    email = f"nopass-{uuid.uuid4().hex[:8]}@example.com"
    create_user(server.db_url, email)
    env = chatmem_env(server.db_url, CHATMEM_PUBLIC_URL=server.base)
    r = subprocess.run(
        [CHATMEM, "users", "login-link", "--email", email],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    link = r.stdout.strip().splitlines()[-1]
    assert link.startswith(f"{server.base}/api/auth/magic?token=")
    ctx, page, console = new_page(browser, server.base, look)
    page.goto(link)
    page.get_by_role("heading", name="What can I help with?").wait_for()
    page.goto("/settings")
    page.get_by_role("heading", name="Set a password").wait_for()
    assert page.get_by_label("Current password").count() == 0
    page.get_by_label("New password", exact=True).fill("my first password")
    page.get_by_label("Repeat the new password").fill("my first password")
    page.get_by_role("button", name="Set a password").click()
    page.get_by_role("status").filter(has_text="Password changed").wait_for()
    page.get_by_role("heading", name="Change password").wait_for()
    shot(page, "settings-first-password", look)
    open_sidebar_if_narrow(page, look)
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="Log in to chatmem").wait_for()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("my first password")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="What can I help with?").wait_for()
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_settings_password_theme_and_language(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/settings")
    page.get_by_role("heading", name="Change password").wait_for()
    shot(page, "settings", look)
    assert not unnamed_controls(page)
    # password: wrong current one → inline error; then a real change
    page.get_by_label("Current password").fill("not it")
    page.get_by_label("New password", exact=True).fill("brand new pass 1")
    page.get_by_label("Repeat the new password").fill("brand new pass 1")
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("alert").filter(has_text="current password is wrong").wait_for()
    console.allow(r"400 \(Bad Request\)")  # the refused change itself
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("status").filter(has_text="Password changed").wait_for()
    ok = httpx.post(
        f"{server.base}/api/auth/login", json={"email": user.email, "password": "brand new pass 1"}
    )
    assert ok.status_code == 200
    # theme: follows the system, switchable, remembered
    scheme = look[1]
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    other = "light" if scheme == "dark" else "dark"
    page.get_by_label("Light" if other == "light" else "Dark").check()
    page.wait_for_function(f"document.documentElement.dataset.theme === '{other}'")
    assert eventually(lambda: user.api.get("/api/me").json()["settings"].get("theme") == other)
    page.reload()
    page.wait_for_function(f"document.documentElement.dataset.theme === '{other}'")
    page.get_by_label("System").check()
    page.wait_for_function(f"document.documentElement.dataset.theme === '{scheme}'")
    # language: the UI switches, and the server names new conversations in it
    assert user.api.get("/api/me").json()["settings"]["language"] == "en"  # from the browser
    assert user.api.post("/api/conversations", json={}).json()["title"] == "New chat"
    page.get_by_label("Language").select_option("zh")
    page.get_by_role("heading", name="修改密码").wait_for()
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert eventually(lambda: user.api.get("/api/me").json()["settings"]["language"] == "zh")
    assert user.api.post("/api/conversations", json={}).json()["title"] == "新对话"
    open_sidebar_if_narrow(page, look)
    page.get_by_role("button", name="+ 新对话").wait_for()
    shot(page, "settings-zh", look)
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_chinese_browser_gets_chinese(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, locale="zh-CN")
    page.goto("/")
    page.get_by_role("heading", name="登录 chatmem").wait_for()
    shot(page, "login-zh", look)
    page.get_by_label("邮箱").fill(user.email)
    page.get_by_label("密码").fill(PASSWORD)
    page.get_by_role("button", name="登录").click()
    page.get_by_role("heading", name="有什么可以帮你？").wait_for()
    assert page.get_by_role("heading", name="新对话").count() == 1  # the new chat's title
    assert user.api.get("/api/me").json()["settings"]["language"] == "zh"
    c = user.api.post("/api/conversations", json={}).json()
    assert c["title"] == "新对话"
    user.say(
        c["id"],
        "潮池里有什么？",
        [{"kind": "text", "text": "海葵、海星和**小螃蟹**。\n\n```python\nprint('潮池')\n```"}],
    )
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant", has_text="海葵").wait_for()
    no_horizontal_scroll(page)
    assert topbar_fits(page) and title_room(page) >= 96
    shot(page, "chat-zh", look)
    open_sidebar_if_narrow(page, look)
    shot(page, "sidebar-zh", look)
    done(page, console)


# ── 1. layout ────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_layout_long_chat_opens_at_newest_and_keeps_position(browser, server, user, look):
    c = user.conversation("Long one")
    for i in range(1, 61):  # 120 messages: three pages of 50
        user.say(c["id"], f"Question number {i}", f"Answer number {i}, with some words to wrap.")
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    last = page.locator(".msg.assistant", has_text="Answer number 60,")
    last.wait_for()
    vh = page.viewport_size["height"]
    # the newest message and the composer are on screen; the page itself does not scroll
    assert last.bounding_box()["y"] + last.bounding_box()["height"] <= vh
    box = composer(page).bounding_box()
    assert box and box["y"] + box["height"] <= vh
    assert page.evaluate("document.scrollingElement.scrollHeight") <= vh
    no_horizontal_scroll(page)
    assert not emoji_in_chrome(page)  # the answers' thumbs are drawn, not emoji
    assert title_room(page) >= 96  # at 390 px the title had 40 px ("Lo…") beside the tools
    assert topbar_fits(page)
    shot(page, "chat-long", look)
    # scrolling up loads older pages and keeps what the reader was looking at in place
    top = page.locator(".msg").first
    top_id = top.get_attribute("data-id")
    page.evaluate("document.querySelector('.messages').scrollTop = 0")
    page.wait_for_function(
        "id => document.querySelector('.msg').dataset.id !== id", arg=top_id, timeout=20_000
    )
    anchor = page.locator(f'.msg[data-id="{top_id}"]')
    y = anchor.bounding_box()["y"]
    assert -5 < y < vh, y  # still in view after the older page went in above it
    first_q = page.locator(".msg.user .user-text", has_text=re.compile(r"^Question number 1$"))
    for _ in range(20):
        page.evaluate("document.querySelector('.messages').scrollTop = 0")
        if first_q.count():
            break
        page.wait_for_timeout(300)
    first_q.wait_for()
    assert page.locator(".msg").count() == 120
    # the sidebar collapses (desktop) / opens as a drawer and closes (phone)
    if look[0] == "desktop":
        page.get_by_role("button", name="Toggle sidebar").first.click()
        page.locator("#sidebar").wait_for(state="hidden")
        page.get_by_role("button", name="Toggle sidebar").click()
        page.locator("#sidebar").wait_for(state="visible")
    else:
        assert not page.locator("#sidebar").is_visible()
        page.get_by_role("button", name="Toggle sidebar").click()
        page.locator("#sidebar").wait_for(state="visible")
        no_horizontal_scroll(page)
        shot(page, "sidebar-drawer", look)
        page.keyboard.press("Escape")
        page.locator("#sidebar").wait_for(state="hidden")
    done(page, console)


# ── 2. chat ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_send_stream_markdown_copy_and_title(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/")
    box = composer(page)
    box.click()
    box.type("Tell me about tide pools")
    box.press("Shift+Enter")
    box.type("and starfish")
    assert box.input_value() == "Tell me about tide pools\nand starfish"
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/c_"))
    cid = page.url.rsplit("/", 1)[1]
    page.locator(".msg.assistant .pulse", has_text="Writing").wait_for()  # visible state
    page.get_by_role("button", name="Stop").wait_for()
    shot(page, "chat-streaming", look)
    wait_answer(page)
    assert box.input_value() == ""
    page.get_by_role("button", name="Send").wait_for()
    shown = page.locator(".msg.assistant .md").inner_text()
    stored = user.messages(cid)[-1]
    assert stored["status"] == "complete" and "tide pools" in stored["text"]
    assert " ".join(shown.split()) == " ".join(stored["text"].split())
    # the generated title reaches the sidebar without a reload
    open_sidebar_if_narrow(page, look)
    page.locator(f'.conv-item[data-id="{cid}"]', has_text="Tell me about tide pools").wait_for(
        timeout=30_000
    )
    if look[0] == "phone":
        page.keyboard.press("Escape")
    # Markdown: headings, lists, tables, safe links, highlighted code with copy; thinking folds
    user.api.post(
        f"/api/conversations/{cid}/messages",
        json={"content": "And as Markdown?", "generate": False},
    )
    user.api.post(
        f"/api/conversations/{cid}/messages",
        json={
            "role": "assistant",
            "content": [
                {"kind": "thinking", "text": "The user wants structure."},
                {"kind": "text", "text": MARKDOWN},
            ],
        },
    )
    page.reload()
    md = page.locator(".msg.assistant .md").last
    md.locator("h1", has_text="Tide pools").wait_for()
    assert md.locator("li").count() == 2 and md.locator("table td", has_text="starfish").count()
    assert md.locator(".hljs-keyword", has_text="def").count() == 1
    link = md.get_by_role("link", name="a link")
    assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
    assert md.locator("img").count() == 0 and md.locator("a[href^=javascript]").count() == 0
    assert page.evaluate("window.__pwned") is None  # raw HTML and javascript: links never ran
    thinking = page.locator(".msg.assistant details.thinking").last
    assert thinking.get_attribute("open") is None
    thinking.locator("summary").click()
    assert thinking.get_attribute("open") is not None
    md.get_by_role("button", name="Copy code").click()
    md.get_by_role("button", name="Copy code").filter(has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()").startswith("def count(legs: int)")
    page.locator(".msg.assistant").last.get_by_role("button", name="Copy message").click()
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    assert "# Tide pools" in page.evaluate("navigator.clipboard.readText()")
    md.scroll_into_view_if_needed()
    shot(page, "chat-markdown", look)
    no_horizontal_scroll(page)
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_reload_midstream_resumes_and_stop_from_another_tab(browser, server, user, look):
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    cid = new_chat(page, "Please write a long answer about coral reefs")
    page.locator(".msg.assistant.streaming .md p").wait_for()
    page.reload()  # mid-stream: the server keeps generating; the page resumes the stream
    page.locator(".msg.user", has_text="coral reefs").wait_for()
    # while it streams, what is shown is always a beginning of the answer (the old page showed
    # the replayed text twice until the end, when the stored row replaced it)
    samples = []
    for _ in range(600):
        text, live = page.evaluate(
            """() => [document.querySelector('.msg.assistant .md')?.innerText ?? '',
                      !!document.querySelector('.msg.assistant.streaming, .msg.assistant.connecting')]"""
        )
        samples.append(text)
        if not live and samples[-1]:
            break
        page.wait_for_timeout(100)
    wait_answer(page)
    stored = user.messages(cid)[-1]
    final = " ".join(stored["text"].split())
    shown = page.locator(".msg.assistant .md").inner_text()
    assert " ".join(shown.split()) == final  # no duplicated text
    seen = [" ".join(t.split()) for t in samples if t.strip()]
    assert seen and all(final.startswith(t) for t in seen), (seen, final)
    # a second answer, stopped from another tab (logged in first: under load a new browser
    # context and its login took longer than the whole answer, and Stop had become Send)
    ctx2, other, console2 = new_page(browser, server.base, look, login=user.login)
    composer(page).fill("And another long one about kelp forests")
    composer(page).press("Enter")
    page.locator(".msg.assistant.streaming").wait_for()
    other.goto(f"/c/{cid}")
    other.get_by_role("button", name="Stop").click()
    page.locator(".msg.assistant.stopped .msg-state", has_text="Stopped").wait_for()
    other.locator(".msg.assistant.stopped").wait_for()
    last = user.messages(cid)[-1]
    assert last["stop_reason"] == "stopped" and last["status"] == "complete"
    page.get_by_role("button", name="Send").wait_for()
    shot(page, "chat-stopped", look)
    done(other, console2)
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_switching_chats_mid_stream_keeps_stop_with_its_chat(browser, server, user, look):
    quiet = user.conversation("Quiet chat", ("Hi", "Hello."))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    busy = new_chat(page, "A long answer about volcanoes please")
    page.locator(".msg.assistant.streaming").wait_for()
    open_sidebar_if_narrow(page, look)
    page.locator(".conv-link", has_text="Quiet chat").click()
    page.locator(".msg.assistant", has_text="Hello.").wait_for()
    assert page.get_by_role("button", name="Stop").count() == 0  # not this chat's answer
    composer(page).fill("typed while the other chat streams")
    assert page.get_by_role("button", name="Send").is_enabled()
    page.go_back()
    page.wait_for_url(re.compile(busy))
    stop = page.get_by_role("button", name="Stop")
    if stop.count():
        stop.click()
    wait_answer(page)
    assert user.messages(quiet["id"])[-1]["text"] == "Hello."  # the quiet chat was untouched
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_failed_send_keeps_the_text_and_says_why(browser, server, user, look):
    c = user.conversation("Too long", ("Hi", "Hello."))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    console.allow(r"413")
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant", has_text="Hello.").wait_for()
    big = "word " * 6000  # 30 kB > CHATMEM_MAX_MESSAGE_BYTES
    composer(page).fill(big)
    composer(page).press("Enter")
    page.get_by_role("alert").filter(has_text="too long to send").wait_for()
    assert composer(page).input_value() == big
    assert len(user.messages(c["id"])) == 2  # nothing was written
    shot(page, "chat-send-error", look)
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_a_provider_failure_shows_the_error_and_regenerate_recovers(browser, server, user, look):
    c = user.conversation("Flaky provider")
    user.api.patch(f"/api/conversations/{c['id']}", json={"model": "unreachable"})
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    page.wait_for_function(
        "() => document.querySelector('.model-picker select')?.value === 'unreachable'"
    )
    composer(page).fill("Are you there?")
    composer(page).press("Enter")
    state = page.locator(".msg.assistant.error .msg-state")
    state.wait_for(timeout=60_000)
    assert "Error:" in state.inner_text() and "could not be reached" in state.inner_text()
    assert user.messages(c["id"])[-1]["status"] == "error"
    assert composer(page).input_value() == ""  # the question was sent and kept
    shot(page, "chat-error", look)
    page.get_by_label("Model", exact=True).select_option("demo")
    assert eventually(
        lambda: user.api.get(f"/api/conversations/{c['id']}").json()["model_id"] == "demo"
    )
    page.locator(".msg.assistant").last.get_by_role("button", name="Regenerate").click()
    page.locator(".msg.assistant .branch-pos", has_text="2/2").wait_for(timeout=60_000)
    wait_answer(page)
    done(page, console)


# ── 3. the tree ─────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_tree_regenerate_edit_resend_fork_delete_and_inline_thread(browser, server, user, look):
    c = user.conversation(
        "Tree",
        ("What lives in tide pools?", "Anemones, starfish and small crabs live in tide pools."),
        ("Which is the slowest?", "The starfish is the slowest of them."),
    )
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    last = page.locator(".msg.assistant").last
    last.wait_for()
    # regenerate → a second version with arrows n/m
    last.get_by_role("button", name="Regenerate").click()
    wait_answer(page, 2)
    last = page.locator(".msg.assistant").last
    assert last.locator(".branch-pos").inner_text() == "2/2"
    last.get_by_role("button", name="Previous version").click()
    page.locator(".msg.assistant").last.filter(has_text="slowest of them").wait_for()
    assert page.locator(".msg.assistant").last.locator(".branch-pos").inner_text() == "1/2"
    # edit in place, in an editor
    last = page.locator(".msg.assistant").last
    more(last, "Edit message")
    editor = last.get_by_role("textbox", name="Edit message")
    editor.fill("The starfish, by far.")
    last.get_by_role("button", name="Save").click()
    editor.wait_for(state="detached")
    page.locator(".msg.assistant .md").last.filter(has_text="The starfish, by far.").wait_for()
    assert eventually(lambda: user.messages(c["id"])[-1]["text"] == "The starfish, by far.")
    # edit and resend the question → a new user branch and a fresh answer
    q = page.locator(".msg.user").last
    q.get_by_role("button", name="Edit message").click()
    q.get_by_role("textbox", name="Edit message").fill("Which is the fastest?")
    q.get_by_role("button", name="Send").click()
    page.locator(".msg.user").last.filter(has_text="Which is the fastest?").wait_for()
    wait_answer(page, 2)
    assert page.locator(".msg.user").last.locator(".branch-pos").inner_text() == "2/2"
    shot(page, "chat-tree", look)
    # delete a round, after a confirmation (Cancel keeps it)
    first_q = page.locator(".msg.user").first
    more(page.locator(".msg.assistant").first, "Delete round")
    page.get_by_role("dialog", name="Delete this round?").get_by_role(
        "button", name="Cancel"
    ).click()
    assert page.locator(".msg.user").count() == 2
    more(page.locator(".msg.assistant").first, "Delete round")
    page.get_by_role("dialog", name="Delete this round?").get_by_role(
        "button", name="Delete round"
    ).click()
    first_q.filter(has_text="What lives").wait_for(state="detached")
    assert page.locator(".msg.user").count() == 1
    # inline thread from a text selection: quote → side panel with its own chat
    ask_about_selection(page, last=True)
    panel = page.get_by_role("complementary", name="Thread")
    panel.wait_for()
    quote = panel.locator(".thread-quote").inner_text()
    assert quote and quote in page.locator(".msg.assistant .md").first.inner_text()
    panel.locator("#thread-input").fill("Tell me more about this")
    panel.locator("#thread-input").press("Enter")
    panel.locator(".msg.assistant.done").wait_for(timeout=60_000)
    shot(page, "chat-thread", look)
    threads = user.api.get(f"/api/conversations/{c['id']}/inline-threads").json()["items"]
    assert len(threads) == 1 and threads[0]["inline_quote"] == quote
    panel.get_by_role("button", name="Close thread").click()
    panel.wait_for(state="detached")
    # fork from a message → a new conversation with its own URL
    more(page.locator(".msg.assistant").last, "Fork from here")
    page.wait_for_url(lambda url: c["id"] not in url and "/c/c_" in url)
    page.locator(".msg.user", has_text="Which is the fastest?").wait_for()
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_inline_threads_can_be_found_and_reopened(browser, server, user, look):
    """A thread started from a quote used to vanish from the UI once its panel closed or the page
    reloaded: an answer with threads now shows "N threads" (one request per conversation) and
    marks the quoted passages, and the button reopens the thread in the panel with its history,
    after a reload too."""
    c = user.conversation(
        "Threads again",
        ("What lives in tide pools?", "Anemones, starfish and small crabs live in tide pools."),
        ("Which is the slowest?", "The starfish is the slowest of them."),
    )
    first_answer = user.messages(c["id"])[1]["id"]
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    listed = []
    page.on(
        "request",
        lambda r: "/inline-threads" in r.url and r.method == "GET" and listed.append(r.url),
    )
    page.goto(f"/c/{c['id']}")
    answer = page.locator(".msg.assistant").first
    answer.filter(has_text="small crabs").wait_for()
    assert page.locator(".threads-btn").count() == 0  # no threads yet, no button
    # a thread from a selection; once it exists its answer says so
    ask_about_selection(page, last=False)
    panel = page.get_by_role("complementary", name="Thread")
    panel.wait_for()
    panel.locator("#thread-input").fill("Which anemones?")
    panel.locator("#thread-input").press("Enter")
    panel.locator(".msg.assistant.done").wait_for(timeout=60_000)
    answer.get_by_role("button", name="1 thread").wait_for()
    panel.get_by_role("button", name="Close thread").click()
    panel.wait_for(state="detached")
    # after a reload: still there (visible without hovering), and it reopens with its history
    page.reload()
    chip = page.locator(".msg.assistant").first.get_by_role("button", name="1 thread")
    chip.wait_for()
    assert chip.evaluate("el => getComputedStyle(el).opacity") == "1"
    assert page.locator(".msg.assistant").last.locator(".threads-btn").count() == 0
    assert not unnamed_controls(page)
    marked = "() => [...(CSS.highlights.get('thread-quote') || [])].map(r => r.toString()).sort()"
    assert page.evaluate(marked) == ["Anemones,"]  # the quoted passage is marked in the answer
    chip.click()
    panel.wait_for()
    assert panel.locator(".thread-quote").inner_text() == "Anemones,"
    panel.locator(".msg.user", has_text="Which anemones?").wait_for()
    panel.locator(".msg.assistant.done").wait_for()
    page.wait_for_function("document.activeElement.id === 'thread-input'")
    page.keyboard.press("Escape")
    panel.wait_for(state="detached")
    # a second thread on the same answer: "2 threads" is a menu of their quotes
    user.api.post(
        f"/api/conversations/{c['id']}/inline-threads",
        json={"message_id": first_answer, "quote": "small crabs"},
    ).raise_for_status()
    page.reload()
    two = page.locator(".msg.assistant").first.get_by_role("button", name="2 threads")
    two.wait_for()
    assert page.evaluate(marked) == ["Anemones,", "small crabs"]
    two.click()
    page.get_by_role("menuitem", name="small crabs").click()
    panel.wait_for()
    assert panel.locator(".thread-quote").inner_text() == "small crabs"
    assert panel.locator(".msg").count() == 0  # this one has no messages yet
    shot(page, "chat-thread-reopened", look)
    no_horizontal_scroll(page)
    # the other one, from the same menu while the panel is open: the panel switches to it
    if look[0] == "phone":
        panel.get_by_role("button", name="Close thread").click()
        panel.wait_for(state="detached")
    two.click()
    page.get_by_role("menuitem", name="Anemones,").click()
    panel.locator(".msg.user", has_text="Which anemones?").wait_for()
    assert panel.locator(".thread-quote").inner_text() == "Anemones,"
    # one list request per page load (and one after the thread was made), never one per message
    assert len(listed) <= 4, listed
    assert all("message_id" not in u for u in listed)
    done(page, console)


def test_ctrl_enter_in_the_question_editor_does_not_send_while_an_answer_is_written(
    browser, server, user
):
    """The editor's Send button is disabled while an answer streams; its shortcut Ctrl+Enter used
    to send anyway and start a second generation on a new branch beside the running one."""
    look = ("desktop", "light")
    c = user.conversation("Busy edit", ("What do sea otters eat?", "Urchins, crabs and clams."))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant", has_text="Urchins").wait_for()
    composer(page).fill("And where do they sleep?")
    composer(page).press("Enter")
    page.locator(".msg.assistant.streaming").wait_for()
    first = page.locator(".msg.user").first
    first.get_by_role("button", name="Edit message").click()
    editor = first.get_by_role("textbox", name="Edit message")
    editor.fill("What do sea otters eat in winter?")
    assert first.get_by_role("button", name="Send").is_disabled()
    editor.press("Control+Enter")
    page.wait_for_timeout(500)
    assert page.locator(".msg.assistant.streaming").count() == 1  # still busy when pressed
    assert editor.is_visible()  # nothing sent: the editor stays open with its text
    page.get_by_role("button", name="Stop").click()
    wait_answer(page, 2)
    path = user.messages(c["id"])
    assert [m["text"] for m in path if m["role"] == "user"] == [
        "What do sea otters eat?",
        "And where do they sleep?",
    ]
    assert path[0]["branch_count"] == 1
    done(page, console)


# ── 4. conversations ────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_conversation_list_actions_search_projects_and_models(browser, server, user, look):
    for i in range(1, 106):
        user.api.post("/api/conversations", json={"title": f"Chat {i:03d}"})
    target = user.conversation(
        "Ocean notes",
        ("Notes on the abyssal zone", "The abyssal zone is very dark and cold."),
        *[(f"filler question {i}", f"filler answer {i}") for i in range(30)],
    )
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{target['id']}")
    page.locator(".msg.assistant", has_text="filler answer 29").wait_for()
    # a URL per conversation: reload and a new tab open it again
    page.reload()
    page.locator(".msg.assistant", has_text="filler answer 29").wait_for()
    tab = ctx.new_page()
    tab.goto(f"/c/{target['id']}")
    tab.locator(".msg.assistant", has_text="filler answer 29").wait_for()
    tab.close()
    open_sidebar_if_narrow(page, look)
    sidebar = page.locator("#sidebar")
    # infinite scroll past 100
    assert sidebar.locator(".conv-item", has_text="Chat 001").count() == 0
    for _ in range(20):
        sidebar.locator(".sidebar-scroll").evaluate("el => el.scrollTop = el.scrollHeight")
        if sidebar.locator(".conv-item", has_text="Chat 001").count():
            break
        page.wait_for_timeout(300)
    sidebar.locator(".conv-item", has_text="Chat 001").wait_for()
    item = sidebar.locator(".conv-item", has_text="Chat 050")

    def act(item, name):
        item.get_by_role("button", name=re.compile("^Actions for")).click()
        page.get_by_role("menuitem", name=name).click()

    # pin: it moves to the top, marked
    act(item, "Pin")
    first = sidebar.locator(".conv-item").first
    first.filter(has_text="Chat 050").wait_for()
    assert first.get_by_label("Pinned").count() == 1
    assert not emoji_in_chrome(page)  # the pin is drawn, not an emoji
    act(first, "Star")
    first.get_by_label("Starred").wait_for()
    # rename
    act(first, "Rename")
    dialog = page.get_by_role("dialog", name="Rename")
    dialog.get_by_role("textbox").fill("Chat fifty")
    dialog.get_by_role("button", name="Save").click()
    sidebar.locator(".conv-item").first.filter(has_text="Chat fifty").wait_for()
    # archive → gone from the list, in the archive view, back again
    act(sidebar.locator(".conv-item").first, "Archive")
    sidebar.locator(".conv-item", has_text="Chat fifty").wait_for(state="detached")
    sidebar.get_by_role("link", name="Archive").click()
    page.get_by_role("heading", name="Archived").wait_for()
    arch = page.locator(".page-body .conv-item", has_text="Chat fifty")
    arch.wait_for()
    shot(page, "archive", look)
    act(arch, "Unarchive")
    arch.wait_for(state="detached")
    # delete, after a confirmation
    open_sidebar_if_narrow(page, look)
    act(sidebar.locator(".conv-item", has_text="Chat fifty"), "Delete")
    page.get_by_role("dialog", name="Delete this conversation?").get_by_role(
        "button", name="Delete"
    ).click()
    sidebar.locator(".conv-item", has_text="Chat fifty").wait_for(state="detached")
    titles = [c["title"] for c in user.api.get("/api/conversations?limit=200").json()["items"]]
    assert "Chat fifty" not in titles and "Chat 049" in titles
    # search titles and messages; a message hit opens in context
    page.keyboard.press("Control+k")
    search = page.get_by_role("dialog", name="Search chats")
    search.get_by_role("combobox").fill("ocean")
    titles = search.locator("section", has=page.get_by_role("heading", name="Titles"))
    titles.locator(".result mark", has_text="Ocean").wait_for()
    search.get_by_role("combobox").fill("abyssal")
    hit = search.locator(".result", has_text="Ocean notes").last
    hit.locator("mark", has_text="abyssal").first.wait_for()
    shot(page, "search", look)
    hit.click()
    page.wait_for_url(re.compile(r"\?m="))
    target_msg = page.locator(".msg.target", has_text="abyssal")
    target_msg.wait_for()
    box = target_msg.bounding_box()
    assert box and 0 <= box["y"] < page.viewport_size["height"]
    # projects: create with instructions, rename, move a chat in
    open_sidebar_if_narrow(page, look)
    page.get_by_role("button", name="New project").click()
    dlg = page.get_by_role("dialog", name="New project")
    dlg.get_by_label("Name").fill("Marine biology")
    dlg.get_by_label("Instructions for every chat in this project").fill("Answer like a diver.")
    dlg.get_by_role("button", name="Create project").click()
    page.get_by_role("heading", name=re.compile("Marine biology")).wait_for()
    page.get_by_role("button", name="Edit project").click()
    dlg = page.get_by_role("dialog", name="Edit project")
    dlg.get_by_label("Name").fill("Marine life")
    dlg.get_by_role("button", name="Save").click()
    page.get_by_role("heading", name=re.compile("Marine life")).wait_for()
    page.get_by_text("Answer like a diver.").wait_for()
    assert not emoji_in_chrome(page) and title_room(page) >= 96 and topbar_fits(page)
    no_horizontal_scroll(page)
    shot(page, "project", look)
    open_sidebar_if_narrow(page, look)
    act(sidebar.locator(".conv-item", has_text="Ocean notes"), "Move to project")
    page.get_by_role("dialog", name="Move to project").get_by_role(
        "button", name="Marine life"
    ).click()
    page.locator(".page-body .conv-item", has_text="Ocean notes").wait_for()
    [proj] = user.api.get("/api/projects").json()["items"]
    assert proj["instructions"] == "Answer like a diver."
    assert user.api.get(f"/api/conversations/{target['id']}").json()["project_id"] == proj["id"]
    # the model picker lists /api/models and sets the conversation's model
    page.goto(f"/c/{target['id']}")
    picker = page.get_by_label("Model", exact=True)
    picker.locator("option").first.wait_for(state="attached")
    ids = picker.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert ids == [m["id"] for m in user.api.get("/api/models").json()["items"]]
    picker.select_option("fast")
    page.wait_for_function("() => document.querySelector('.model-picker select').value === 'fast'")
    assert eventually(
        lambda: user.api.get(f"/api/conversations/{target['id']}").json()["model_id"] == "fast"
    )
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_search_results_by_keyboard(browser, server, user, look):
    """In the Ctrl+K dialog the arrow keys move a highlighted hit and Enter opens it, as a click
    does: the field is a combobox whose aria-activedescendant names the highlighted option."""
    tag = f"kelp{uuid.uuid4().hex[:6]}"
    user.conversation(f"{tag} forest", ("Where is it?", "Off the coast."))
    seal = user.conversation("Seals", ("What do seals eat?", f"Fish, and they hide in {tag}."))
    user.conversation("Urchins", ("And urchins?", f"Urchins graze the {tag} down."))
    seal_answer = user.messages(seal["id"])[1]["id"]
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/")
    page.get_by_role("heading", name="What can I help with?").wait_for()
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("Control+k")
    dialog = page.get_by_role("dialog", name="Search chats")
    box = dialog.get_by_role("combobox", name="Search titles and messages")
    box.wait_for()
    assert page.evaluate("document.activeElement.type") == "search"
    page.keyboard.type(tag)
    listbox = dialog.get_by_role("listbox")
    options = listbox.get_by_role("option")
    page.wait_for_function("() => document.querySelectorAll('[role=option]').length === 3")
    assert box.get_attribute("aria-controls") == listbox.get_attribute("id")
    assert box.get_attribute("aria-expanded") == "true"

    def highlighted() -> str:
        sel = listbox.locator("[role=option][aria-selected=true]")
        assert sel.count() == 1
        assert box.get_attribute("aria-activedescendant") == sel.get_attribute("id")
        assert page.evaluate("document.activeElement.type") == "search"  # the focus stays put
        return sel.inner_text()

    # the first hit is highlighted as the results arrive: the title, then the two messages
    assert f"{tag} forest" in highlighted()
    page.keyboard.press("ArrowDown")
    first_msg = highlighted()
    assert tag in first_msg and "forest" not in first_msg
    page.keyboard.press("ArrowDown")
    second_msg = highlighted()
    assert second_msg != first_msg
    page.keyboard.press("ArrowDown")  # wraps around to the top
    assert f"{tag} forest" in highlighted()
    page.keyboard.press("ArrowUp")  # and back to the bottom
    assert highlighted() == second_msg
    page.keyboard.press("ArrowUp")
    assert highlighted() == first_msg
    assert options.nth(1).evaluate("el => el.classList.contains('active')")
    shot(page, "search-keyboard", look)
    # move to the seal's answer and open it with Enter: the conversation, at that message
    if "Seals" not in first_msg:
        page.keyboard.press("ArrowDown")
    assert "Seals" in highlighted()
    page.keyboard.press("Enter")
    dialog.wait_for(state="hidden")
    page.wait_for_url(re.compile(rf"/c/{seal['id']}\?m={seal_answer}$"))
    page.locator(".msg.target", has_text=tag).wait_for()
    done(page, console)


# ── 7. keyboard, accessibility, CSP ─────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_keyboard_only_accessible_names_live_region_and_csp(browser, server, user, look):
    user.conversation("Keyboard chat", ("Hi there", "Hello, keyboard user."))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    response = page.goto("/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    page.get_by_role("heading", name="What can I help with?").wait_for()
    assert page.evaluate("document.activeElement.id") == "composer-input"
    # help dialog lists the shortcuts
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("?")
    help_ = page.get_by_role("dialog", name="Keyboard shortcuts")
    help_.wait_for()
    for key in ("Ctrl", "K", "Enter", "Shift"):
        assert help_.locator("kbd", has_text=key).count()
    shot(page, "help", look)
    page.keyboard.press("Escape")
    help_.wait_for(state="hidden")
    # open a conversation with the keyboard alone: Tab to it, Enter
    if look[0] == "phone":
        page.keyboard.press("Control+b")
        page.locator("#sidebar").wait_for(state="visible")
    page.evaluate("document.activeElement.blur()")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('conv-link')"):
            break
    assert page.evaluate("document.activeElement.textContent").endswith("Keyboard chat")
    # the focus is visible
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")
    page.keyboard.press("Enter")
    page.locator(".msg.assistant", has_text="Hello, keyboard user.").wait_for()
    # the conversation's menu by keyboard: Tab to its button, arrows, Enter
    page.keyboard.press("Control+b") if look[0] == "phone" else None
    page.get_by_role("button", name="Actions for Keyboard chat").focus()
    page.keyboard.press("Enter")
    page.get_by_role("menuitem", name="Rename").wait_for()
    assert page.evaluate("document.activeElement.textContent") == "Rename"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.textContent") == "Pin"
    page.keyboard.press("Enter")
    page.locator(".conv-item").first.get_by_label("Pinned").wait_for()
    # Shift+Esc focuses the composer; Enter sends; the answer is announced politely
    page.keyboard.press("Escape") if look[0] == "phone" else None
    page.keyboard.press("Shift+Escape")
    assert page.evaluate("document.activeElement.id") == "composer-input"
    page.keyboard.type("One more, by keyboard")
    page.keyboard.press("Enter")
    page.locator(".msg.assistant.streaming").wait_for()
    page.keyboard.press("Escape")  # Escape in the composer stops the answer
    page.locator(".msg.assistant.stopped").wait_for(timeout=30_000)
    live = page.locator("[aria-live=polite]", has_text="Answer complete.")
    live.wait_for(timeout=30_000)
    # an answer's actions by keyboard: Shift+Tab back from the composer reaches their toolbar
    # (visibly focused), Enter opens "More actions", the arrows reach "Ask about this": a thread
    # opens with the focus in its own composer; Escape closes it, the focus back on the button
    on_first_answer = """() => document.activeElement.getAttribute('aria-label') === 'More actions'
        && document.activeElement.closest('.msg').textContent.includes('Hello, keyboard user.')"""
    for _ in range(40):
        page.keyboard.press("Shift+Tab")
        if page.evaluate(on_first_answer):
            break
    assert page.evaluate(on_first_answer)
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.textContent") == "Ask about this"
    page.keyboard.press("Enter")
    thread = page.get_by_role("complementary", name="Thread")
    thread.wait_for()
    page.wait_for_function("document.activeElement.id === 'thread-input'")
    page.keyboard.type("Why that?")
    page.keyboard.press("Enter")
    thread.locator(".msg.assistant.done").wait_for(timeout=60_000)
    page.keyboard.press("Escape")
    thread.wait_for(state="detached")
    page.wait_for_function(on_first_answer)
    # Ctrl+K searches; Ctrl+Shift+O starts a new chat
    page.keyboard.press("Control+k")
    page.get_by_role("dialog", name="Search chats").wait_for()
    assert page.evaluate("document.activeElement.type") == "search"
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Shift+O")
    page.wait_for_url(re.compile(r"/$"))
    assert not unnamed_controls(page)
    page.goto("/c/" + user.api.get("/api/conversations").json()["items"][0]["id"])
    page.locator(".msg.assistant").first.wait_for()
    assert not unnamed_controls(page)
    # the CSP forbids inline script: an injected inline script does not run
    console.allow("Content Security Policy")
    page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__inline = 1'; document.head.appendChild(s); }"""
    )
    assert page.evaluate("window.__inline") is None
    done(page, console)


# ── 6. API docs offline ─────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_api_docs_work_offline(browser, server, look):
    ctx, page, console = new_page(browser, server.base, look)
    outside: list[str] = []

    def guard(route):
        if route.request.url.startswith(server.base):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.goto("/docs")
    page.locator(".swagger-ui .info .title", has_text="chatmem").wait_for()
    page.locator(".opblock-summary-path", has_text="/api/conversations").first.wait_for()
    shot(page, "docs", look)
    assert outside == []
    no_horizontal_scroll(page)
    done(page, console)


# ── the screens in the other two looks (desktop dark, phone light) ──────────────────────────


@pytest.mark.parametrize(
    "look", [("desktop", "dark"), ("phone", "light")], ids=["desktop-dark", "phone-light"]
)
def test_main_screens_in_the_other_looks(browser, server, user, look):
    c = user.conversation("Looks", ("Show me Markdown", [{"kind": "text", "text": MARKDOWN}]))
    ctx, page, console = new_page(browser, server.base, look)
    page.goto("/login")
    page.get_by_role("heading", name="Log in to chatmem").wait_for()
    shot(page, "login", look)
    ctx.add_cookies(session_cookies(server.base, *user.login))
    page.goto("/")
    page.get_by_role("heading", name="What can I help with?").wait_for()
    shot(page, "home", look)
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant h1").wait_for()
    no_horizontal_scroll(page)
    assert not emoji_in_chrome(page) and title_room(page) >= 96 and topbar_fits(page)
    shot(page, "chat-markdown", look)
    open_sidebar_if_narrow(page, look)
    shot(page, "sidebar", look)
    page.goto("/settings")
    page.get_by_role("heading", name="Change password").wait_for()
    no_horizontal_scroll(page)
    shot(page, "settings", look)
    done(page, console)


# ── on both databases: the core flow, and a server crash mid-stream ─────────────────────────


CRASH_ENV = {
    "CHATMEM_DEMO_DELAY_MS": "40",
    "CHATMEM_DEMO_MIN_TOKENS": "400",
    "CHATMEM_LEASE_TTL_S": "2",
    "CHATMEM_SWEEP_INTERVAL_S": "0.3",
}


def test_core_flow_and_crash_recovery_on_each_database(browser, db_url):
    """Send, stream, reload mid-stream, regenerate to 2/2 — then SIGKILL the server mid-answer:
    the page says it is reconnecting, and once a server is back the answer ends as interrupted
    with the human message."""
    s = Server(db_url, env_extra=CRASH_ENV).start()
    try:
        email = f"crash-{uuid.uuid4().hex[:6]}@example.com"
        create_user(db_url, email, password=PASSWORD)
        look = ("desktop", "light")
        ctx, page, console = new_page(browser, s.base, look, login=(email, PASSWORD))
        new_chat(page, "A very long answer about the deep sea")
        page.locator(".msg.assistant.streaming .md p").wait_for()
        page.reload()
        page.locator(".msg.assistant.streaming .md p").wait_for()
        s.kill()  # SIGKILL mid-answer
        page.locator(".msg-state", has_text="reconnecting").wait_for(timeout=30_000)
        shot(page, "chat-reconnecting", look)
        s = Server(db_url, env_extra=CRASH_ENV, port=s.port).start()
        state = page.locator(".msg.assistant.interrupted .msg-state")
        state.wait_for(timeout=60_000)
        assert "interrupted" in state.inner_text().lower() and "Regenerate" in state.inner_text()
        shot(page, "chat-interrupted", look)
        page.locator(".msg.assistant").last.get_by_role("button", name="Regenerate").click()
        page.locator(".msg.assistant .branch-pos", has_text="2/2").wait_for(timeout=60_000)
        page.get_by_role("button", name="Stop").click()
        page.locator(".msg.assistant.stopped").wait_for(timeout=30_000)
        console.allow(r"Failed to load resource|ERR_CONNECTION_REFUSED|net::")
        done(page, console)
    finally:
        s.stop()


def test_tree_and_conversation_flows_on_postgres(browser, pg_url):
    """Items 3 and 4 (the tree: regenerate, edit, edit-and-resend, fork, delete a round, inline
    thread; the list: 100+ chats, rename/pin/star/archive/delete, search, projects, model picker)
    in the browser against a server on PostgreSQL too — the same flows as the SQLite runs above,
    at desktop/light, each with a user of its own."""
    if pg_url is None:
        pytest.skip("CHATMEM_TEST_POSTGRES_URL not set (PostgreSQL tests run in CI)")
    s = Server(pg_url, env_extra=ENV, args=()).start()
    try:
        for flow in (
            test_tree_regenerate_edit_resend_fork_delete_and_inline_thread,
            test_conversation_list_actions_search_projects_and_models,
        ):
            email = f"web-pg-{uuid.uuid4().hex[:8]}@example.com"
            flow(
                browser, s, User(s, email, create_user(pg_url, email, password=PASSWORD)), LOOKS[0]
            )
    finally:
        s.stop()

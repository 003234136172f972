"""Sharing and answer feedback in a real browser against a real server (looks as in
tests/test_web_app.py): the share dialog (what is published, create, copy, re-share, revoke), the
public page at /share/{token} (no login, Open Graph title, sanitised Markdown, the author's display
name, "continue this chat"), a revoked page answering 404, and thumbs with reasons and a comment.
The server side of /share/{token} also runs on each database.
"""

from __future__ import annotations

import html
import re
import uuid

import httpx
import pytest

from .browser import LOOK_IDS, LOOKS, new_page, no_horizontal_scroll, shot, unnamed_controls
from .servers import Server, create_user
from .test_web_app import MARKDOWN, browser, done, server, user

pytestmark = pytest.mark.slow
__all__ = ["browser", "server", "user"]  # module fixtures shared with test_web_app

EVIL_TITLE = 'Tides </title><script>window.__pwned=3</script> & "more"'


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_share_dialog_public_page_and_revoke(browser, server, user, look):
    user.api.patch("/api/me", json={"name": "Ada Lovelace"})
    c = user.conversation(
        EVIL_TITLE, ("Tell me about tides <b>now</b>", [{"kind": "text", "text": MARKDOWN}])
    )
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    page.locator(".msg.assistant h1").wait_for()
    page.get_by_role("button", name="Share").click()
    dlg = page.get_by_role("dialog", name="Share")
    assert "Ada Lovelace" in dlg.inner_text() and "Not published" in dlg.inner_text()
    dlg.get_by_role("button", name="Create link").click()
    link = dlg.get_by_label("Link")
    link.wait_for()
    url = link.input_value()
    assert re.search(r"/share/[0-9a-f]{48}$", url), url
    assert not unnamed_controls(page)
    shot(page, "share-dialog", look)

    # the public page, in a fresh context (no login)
    vctx, visitor, vconsole = new_page(browser, server.base, look)
    r = httpx.get(url)
    assert r.status_code == 200
    og = re.search(r'<meta property="og:title" content="([^"]*)"', r.text)
    assert og and html.unescape(og.group(1)) == EVIL_TITLE
    assert "<script>window.__pwned" not in r.text
    visitor.goto(url)
    visitor.get_by_role("heading", name=EVIL_TITLE).wait_for()
    visitor.locator(".msg.assistant h1", has_text="Tide pools").wait_for()  # Markdown rendered
    assert "Ada Lovelace" in visitor.locator(".msg.user").inner_text()
    assert visitor.locator(".msg.user b").count() == 0  # user text is text
    assert visitor.locator(".msg.assistant img[onerror]").count() == 0
    assert visitor.evaluate("window.__pwned") is None
    assert visitor.locator("a[href^='javascript']").count() == 0
    no_horizontal_scroll(visitor)
    shot(visitor, "share-public", look)
    visitor.get_by_role("link", name="Log in to continue this chat").wait_for()
    vctx.close()
    assert not vconsole.problems()

    # re-share: a new link, the old one stops working
    dlg.get_by_role("button", name="Share again (new link)").click()
    page.wait_for_function("u => document.querySelector('.share-link input').value !== u", arg=url)
    url2 = link.input_value()
    assert httpx.get(url).status_code == 404
    assert httpx.get(url2).status_code == 200

    # a logged-in visitor continues the chat in their own account
    page.goto(url2)
    page.get_by_role("button", name="Continue this chat").click()
    page.wait_for_url(re.compile(r"/c/c_"))
    assert page.url.rsplit("/", 1)[1] != c["id"]
    page.locator(".msg.assistant h1", has_text="Tide pools").wait_for()

    # revoke: the page answers 404 and says so
    page.goto(f"/c/{c['id']}")
    page.get_by_role("button", name="Share").click()
    dlg = page.get_by_role("dialog", name="Share")
    dlg.get_by_role("button", name="Revoke link").click()
    dlg.get_by_role("button", name="Create link").wait_for()
    assert httpx.get(url2).status_code == 404
    page.goto(url2)
    page.get_by_role("heading", name="This share does not exist").wait_for()
    console.allow(r"404 \(Not Found\)")
    done(page, console)


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_thumbs_with_reasons_and_comment(browser, server, user, look):
    c = user.conversation("Rate me", ("Question", "An answer."))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto(f"/c/{c['id']}")
    answer = page.locator(".msg.assistant", has_text="An answer.")
    answer.get_by_role("button", name="Bad answer").click()
    dlg = page.get_by_role("dialog", name="What was wrong?")
    dlg.get_by_label("Too long").check()
    dlg.get_by_label("Outdated").check()
    dlg.get_by_label("Comment (optional)").fill("It rambled.")
    shot(page, "feedback-dislike", look)
    dlg.get_by_role("button", name="Send feedback").click()
    answer.locator("button[aria-pressed=true][aria-label='Bad answer']").wait_for()
    mid = answer.get_attribute("data-id")
    fb = user.api.get(f"/api/conversations/{c['id']}/messages/{mid}/feedback").json()["feedback"]
    assert fb["rating"] == "dislike" and set(fb["reasons"]) == {"too_long", "outdated"}
    assert fb["comment"] == "It rambled."
    answer.get_by_role("button", name="Good answer").click()
    answer.locator("button[aria-pressed=true][aria-label='Good answer']").wait_for()
    page.reload()
    page.locator(".msg.assistant", has_text="An answer.").locator(
        "button[aria-pressed=true][aria-label='Good answer']"
    ).wait_for()
    done(page, console)


def test_share_page_server_side_on_each_database(db_url):
    s = Server(db_url).start()
    try:
        key = create_user(db_url, f"s-{uuid.uuid4().hex[:6]}@example.com")
        api = httpx.Client(base_url=s.base, headers={"Authorization": f"Bearer {key}"})
        cid = api.post("/api/conversations", json={"title": "Shared <i>title</i>"}).json()["id"]
        api.post(f"/api/conversations/{cid}/messages", json={"content": "hi", "generate": False})
        token = api.post(f"/api/conversations/{cid}/share").json()["token"]
        r = httpx.get(f"{s.base}/share/{token}")
        assert r.status_code == 200
        assert '<meta property="og:title" content="Shared &lt;i&gt;title&lt;/i&gt;">' in r.text
        assert "<title>Shared &lt;i&gt;title&lt;/i&gt; · chatmem</title>" in r.text
        assert "content-security-policy" in r.headers
        assert api.delete(f"/api/conversations/{cid}/share").status_code == 204
        assert httpx.get(f"{s.base}/share/{token}").status_code == 404
        assert httpx.get(f"{s.base}/share/nope").status_code == 404
    finally:
        s.stop()

"""Workspaces in a real browser against a real server (issue 16, item 7): the sidebar's space
switcher (personal vs a workspace), creating a workspace, inviting by email (the invitee accepts
from their sidebar), changing a role, removing a member, leaving, and author names on the
questions of a shared conversation. Desktop light and 390 px dark, like tests/test_web_app.py;
screenshots in tests/artifacts/web/."""

from __future__ import annotations

import re
import uuid

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
from .test_web_app import PASSWORD, User, browser, done, eventually, server, user

pytestmark = pytest.mark.slow
__all__ = ["browser", "server", "user"]  # module fixtures shared with test_web_app


def another(server, name: str) -> User:
    email = f"{name}-{uuid.uuid4().hex[:8]}@example.com"
    u = User(server, email, create_user(server.db_url, email, password=PASSWORD))
    assert u.api.patch("/api/me", json={"name": name}).status_code == 200
    return u


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
def test_switcher_members_and_authors(browser, server, user, look):
    bob = another(server, "Bob")
    carol = another(server, "Carol")
    user.api.patch("/api/me", json={"name": "Alice"})
    mine = user.conversation("Personal notes", ("hello", "hi"))
    ctx, page, console = new_page(browser, server.base, look, login=user.login)
    page.goto("/")
    open_sidebar_if_narrow(page, look)
    # a new workspace from the switcher
    page.get_by_role("button", name="New workspace").click()
    page.get_by_label("Workspace name").fill("Ocean team")
    page.get_by_role("button", name="Create").click()
    page.wait_for_url(re.compile(r"/workspaces/ws_"))
    wid = page.url.rsplit("/", 1)[1]
    page.get_by_role("heading", name="Members").wait_for()
    # invite Bob by email; Bob accepts from his own sidebar (a second browser context)
    page.get_by_label("Email to invite").fill(bob.email)
    page.get_by_role("button", name="Invite", exact=True).click()
    page.get_by_text(f"Invitation sent to {bob.email}").wait_for()
    bctx, bpage, bconsole = new_page(browser, server.base, look, login=bob.login)
    bpage.goto("/")
    open_sidebar_if_narrow(bpage, look)
    invites = bpage.get_by_role("list", name="Invitations")
    invites.get_by_role("button", name="Accept").click()
    bpage.wait_for_url(f"**/workspaces/{wid}")
    bpage.get_by_role("heading", name="Members").wait_for()
    assert "Leave workspace" in bpage.inner_text("body")
    # Carol joins by a link the API made; the owner makes Bob an admin, then removes Carol
    tok = user.api.post(f"/api/workspaces/{wid}/invites", json={}).json()["token"]
    assert carol.api.post("/api/workspace-invites/join", json={"token": tok}).status_code == 200
    page.reload()
    page.get_by_label("Role of Bob").select_option("admin")
    assert eventually(
        lambda: (
            {
                m["name"]: m["role"]
                for m in user.api.get(f"/api/workspaces/{wid}/members").json()["items"]
            }.get("Bob")
            == "admin"
        )
    )
    page.get_by_role("button", name="Remove Carol").click()
    page.get_by_role("button", name="Remove Carol").wait_for(state="detached")
    assert carol.api.get(f"/api/workspaces/{wid}").status_code == 404
    assert not unnamed_controls(page)
    no_horizontal_scroll(page)
    shot(page, "workspace-members", look)
    # a shared chat: Alice starts it, Bob speaks in it; each question names its author
    page.get_by_role("button", name="New shared chat").click()
    page.wait_for_url(re.compile(r"/c/c_"))
    cid = page.url.rsplit("/", 1)[1]
    body = {"content": "Alice asks first", "generate": False}
    assert user.api.post(f"/api/conversations/{cid}/messages", json=body).status_code == 201
    body = {"content": "Bob follows up", "generate": False}
    assert bob.api.post(f"/api/conversations/{cid}/messages", json=body).status_code == 201
    page.reload()
    q1 = page.locator(".msg.user", has_text="Alice asks first")
    q2 = page.locator(".msg.user", has_text="Bob follows up")
    q2.wait_for()
    assert q1.locator(".msg-author").inner_text() == "Alice"
    assert q2.locator(".msg-author").inner_text() == "Bob"
    open_sidebar_if_narrow(page, look)
    # the chat's workspace is shown (once the list of workspaces has loaded)
    assert eventually(lambda: page.locator("#ws-select").input_value() == wid)
    no_horizontal_scroll(page)
    shot(page, "workspace-authors", look)
    # a personal conversation shows no author line; the switcher goes back to personal space
    page.goto(f"/c/{mine['id']}")
    page.locator(".msg.user", has_text="hello").wait_for()
    assert page.locator(".msg-author").count() == 0
    page.goto(f"/workspaces/{wid}")
    open_sidebar_if_narrow(page, look)
    assert eventually(lambda: page.locator("#ws-select").input_value() == wid)
    page.locator("#ws-select").select_option("")
    page.wait_for_url(re.compile(r"/$"))
    # Bob leaves
    bpage.reload()
    bpage.get_by_role("button", name="Leave workspace").click()
    bpage.wait_for_url(re.compile(r"/$"))
    assert bob.api.get(f"/api/workspaces/{wid}").status_code == 404
    # his switcher no longer offers it (the list of workspaces is fetched again) and his page
    # asks nothing more of it: done() fails on a 404 in the console
    open_sidebar_if_narrow(bpage, look)
    options = bpage.locator("#ws-select option")
    assert eventually(lambda: wid not in options.evaluate_all("os => os.map(o => o.value)"))
    no_horizontal_scroll(bpage)
    shot(bpage, "workspace-left", look)
    done(bpage, bconsole)
    done(page, console)

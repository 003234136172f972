"""Helpers for the browser tests: Debian's Chromium under Playwright, a signed-in page at a given
viewport and colour scheme, console-error capture, and screenshots saved as test artifacts
(tests/artifacts/web/, gitignored) for a person to look at."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import httpx

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
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "web"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
#: Each flow runs at both sizes and, across the two runs, in both themes.
LOOKS = [("desktop", "light"), ("phone", "dark")]
LOOK_IDS = [f"{v}-{s}" for v, s in LOOKS]


def launch(pw):
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        # never a silent skip: `make test` installs Debian's chromium when it can (root + apt)
        raise RuntimeError(
            f"{CHROMIUM} is required for the browser tests "
            "(apt-get install chromium, or set CHATMEM_TEST_CHROMIUM)"
        )
    return pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)


@dataclass
class Console:
    """Console errors, warnings and uncaught exceptions of a page (there must be none)."""

    messages: list[str] = field(default_factory=list)
    allowed: list[re.Pattern] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on(
            "console",
            lambda m: (
                self.messages.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda e: self.messages.append(f"pageerror: {e}"))

    def allow(self, pattern: str) -> None:
        self.allowed.append(re.compile(pattern))

    def problems(self) -> list[str]:
        return [m for m in self.messages if not any(a.search(m) for a in self.allowed)]


def session_cookies(base: str, email: str, password: str) -> list[dict]:
    r = httpx.post(f"{base}/api/auth/login", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    host = httpx.URL(base).host
    return [
        {"name": k, "value": v, "domain": host, "path": "/", "httpOnly": k == "chatmem_session"}
        for k, v in r.cookies.items()
    ]


def new_page(
    browser,
    base: str,
    look: tuple[str, str],
    *,
    login: tuple[str, str] | None = None,
    locale: str = "en-US",
):
    """A fresh context (own cookies) at the look's viewport and colour scheme."""
    viewport, scheme = look
    ctx = browser.new_context(
        viewport=VIEWPORTS[viewport], color_scheme=scheme, locale=locale, base_url=base
    )
    if login:
        ctx.add_cookies(session_cookies(base, *login))
    page = ctx.new_page()
    console = Console()
    console.attach(page)
    page.set_default_timeout(20_000)
    return ctx, page, console


def shot(page, name: str, look: tuple[str, str]) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}-{look[0]}-{look[1]}.png"
    page.screenshot(path=str(path))
    return path


def no_horizontal_scroll(page) -> None:
    sw, iw = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert sw <= iw, f"the page scrolls sideways: {sw} > {iw}"


def open_sidebar_if_narrow(page, look) -> None:
    if look[0] == "phone" and not page.locator("#sidebar").is_visible():
        page.locator(".topbar button[aria-controls=sidebar]").first.click()
        page.locator("#sidebar").wait_for(state="visible")


def unnamed_controls(page) -> list[str]:
    """Buttons, links and form fields without an accessible name (there must be none)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('button, a[href], input, select, textarea')]
        .filter(el => el.offsetParent !== null || el.getClientRects().length)
        .filter(el => {
          const label = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')
            || el.getAttribute('title') || (el.labels && el.labels.length && el.labels[0].textContent)
            || el.textContent || el.getAttribute('placeholder') || el.value;
          return !(label && label.trim());
        }).map(el => el.outerHTML.slice(0, 120))"""
    )


def emoji_in_chrome(page) -> list[str]:
    """Visible text of the app's own controls that needs a colour emoji font (there must be none:
    without one, as on Debian's Chromium here, 👍 📌 🧠 were drawn as empty boxes). What people
    wrote (messages, titles, a project's chosen emoji) is left out."""
    return page.evaluate(
        r"""() => {
          const own = '.md, .user-text, .thread-quote, .conv-title, .topbar-title, .topbar-icon,'
            + ' .result, input, textarea, select';
          const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          const out = [];
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            const el = n.parentElement;
            if (!el || el.closest(own) || !el.getClientRects().length) continue;
            if (/[\u{1F000}-\u{1FAFF}]/u.test(n.textContent)) out.push(el.outerHTML.slice(0, 120));
          }
          return out;
        }"""
    )


def title_room(page) -> float:
    """The width the top bar leaves for the screen's title, in CSS pixels."""
    return page.locator(".topbar-title").first.evaluate("el => el.getBoundingClientRect().width")


def topbar_fits(page) -> bool:
    """Nothing in the top bar is cut off at the right edge (the page itself does not scroll
    sideways then: the bar clips its overflow)."""
    return page.locator(".topbar").first.evaluate("el => el.scrollWidth <= el.clientWidth")

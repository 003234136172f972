"""Problem reports: submit (any user, 10 per hour), and the admin reader.

A report may point at one of the caller's messages or conversations (else 404) and snapshots the
conversation title, so it stays readable after the message or conversation is deleted (the foreign
keys are SET NULL). The hourly limit is counted from the table itself, under a row lock on the
user on PostgreSQL, so it holds across replicas and concurrent submissions.
"""

from __future__ import annotations

from ..auth.models import Principal
from ..contracts.cursor import decode_cursor, encode_cursor
from ..conversations import store as conv_store
from ..db.clock import now_ms
from ..db.engine import Database
from ..errors import ApiError, NotFound, TooManyRequests, Unprocessable, found
from . import image, store
from .form import ReportForm
from .wire import report_out

REPORTS_PER_HOUR = 10
HOUR_MS = 3_600_000
MAX_PIXELS = 32_000_000  # 32 megapixels


class UnsupportedMedia(ApiError):
    status, code = 415, "unsupported_media_type"


def check_screenshot(data: bytes) -> image.ImageInfo:
    try:
        info = image.sniff(data)
    except image.UnsupportedImage as e:
        raise UnsupportedMedia(str(e)) from None
    except image.BadImage as e:
        raise Unprocessable(str(e), code="invalid_screenshot") from None
    if info.pixels > MAX_PIXELS:
        raise Unprocessable(
            f"the screenshot may have at most {MAX_PIXELS} pixels",
            code="screenshot_too_many_pixels",
            details={"width": info.width, "height": info.height},
        )
    return info


async def _link(c, p: Principal, message_id: str | None, conversation_id: str | None):
    """(message_id, conversation_id, title, workspace_id) for the report, all visible to the
    caller (their own, or a workspace conversation they may see)."""
    if message_id:
        owner_conv = await store.owned_message_conversation(c, p.id, message_id)
        if owner_conv is None or (conversation_id and owner_conv != conversation_id):
            raise NotFound("message not found")
        conversation_id = owner_conv
    if not conversation_id:
        return None, None, "", ""
    conv = await conv_store.get_conversation(c, p.id, conversation_id)
    return message_id or None, conv.id, conv.title, conv.workspace_id


async def submit(db: Database, p: Principal, form: ReportForm) -> dict:
    f = form.fields
    shot = check_screenshot(form.screenshot) if form.screenshot else None
    async with db.write() as c:
        await store.lock_user(c, p.id)
        now = now_ms()
        recent = await store.reports_since(c, p.id, now - HOUR_MS)
        if len(recent) >= REPORTS_PER_HOUR:
            wait_ms = max(1, recent[-REPORTS_PER_HOUR] + HOUR_MS - now)
            raise TooManyRequests(
                f"at most {REPORTS_PER_HOUR} problem reports per hour",
                code="rate_limited",
                details={"retry_after_ms": wait_ms},
                retry_after_s=-(-wait_ms // 1000),
            )
        mid, cid, title, wid = await _link(c, p, f.message_id, f.conversation_id)
        row = await store.insert_report(
            c,
            user_id=p.id,
            message_id=mid,
            conversation_id=cid,
            conversation_title=title,
            workspace_id=wid,
            description=f.description,
            page_path=f.page_path,
            user_agent=form.user_agent,
            viewport_width=f.viewport_width,
            viewport_height=f.viewport_height,
            screenshot=form.screenshot if shot else None,
            screenshot_mime=shot.mime if shot else "",
            screenshot_width=shot.width if shot else 0,
            screenshot_height=shot.height if shot else 0,
        )
    return report_out(row)


async def list_reports(db: Database, cursor: str | None, limit: int) -> dict:
    parsed = decode_cursor(cursor, (int, str)) if cursor else None
    async with db.read() as c:
        rows = await store.list_reports(c, parsed, limit)
    page = rows[:limit]
    nxt = encode_cursor(page[-1].created_at, page[-1].id) if len(rows) > limit else None
    return {"items": [report_out(r, admin=True) for r in page], "next_cursor": nxt}


async def screenshot(db: Database, rid: str) -> tuple[bytes, str]:
    async with db.read() as c:
        row = found(await store.screenshot(c, rid), "report not found")
    if row.screenshot is None:
        raise NotFound("this report has no screenshot", code="no_screenshot")
    return bytes(row.screenshot), row.screenshot_mime

"""Reading a problem report from a multipart form, with the limits enforced before storage.

FastAPI's ``Form`` parameters would silently ignore unknown fields and read any file size into
memory; this parser rejects unknown fields (422, like every JSON body), refuses an oversized body
by its Content-Length before parsing (413), and reads at most one byte past the screenshot limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.requests import Request

from ..errors import TooLarge, Unprocessable
from .wire import ReportIn

SCREENSHOT_MAX_BYTES = 3 * 1024 * 1024
#: Room for the text fields and multipart framing on top of the screenshot.
BODY_SLACK = 128 * 1024
TEXT_FIELDS = frozenset(ReportIn.model_fields)
FILE_FIELD = "screenshot"
OPTIONAL = ("message_id", "conversation_id", "page_path", "viewport_width", "viewport_height")


@dataclass(frozen=True)
class ReportForm:
    fields: ReportIn
    screenshot: bytes | None
    user_agent: str


def _invalid(loc: str, msg: str, typ: str) -> Unprocessable:
    return Unprocessable(
        "request validation failed", details=[{"loc": ["body", loc], "msg": msg, "type": typ}]
    )


def _too_large(size: int) -> TooLarge:
    return TooLarge(
        f"the screenshot may be at most {SCREENSHOT_MAX_BYTES} bytes",
        code="screenshot_too_large",
        details={"limit": SCREENSHOT_MAX_BYTES, "size": size},
    )


async def read_report_form(request: Request) -> ReportForm:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > SCREENSHOT_MAX_BYTES + BODY_SLACK:
        raise _too_large(int(declared))
    form = await request.form(max_files=1, max_fields=len(TEXT_FIELDS) + 1)
    try:
        text: dict[str, str] = {}
        shot: bytes | None = None
        for key, value in form.multi_items():
            if key == FILE_FIELD:
                if not isinstance(value, UploadFile):
                    if value == "":  # browsers send an empty part when no file was chosen
                        continue
                    raise _invalid(key, "screenshot must be a file", "file_type")
                data = await value.read(SCREENSHOT_MAX_BYTES + 1)
                if len(data) > SCREENSHOT_MAX_BYTES:
                    raise _too_large(len(data))
                shot = data or None  # an empty file part = no screenshot chosen
            elif key not in TEXT_FIELDS:
                raise _invalid(key, "unknown field", "extra_forbidden")
            elif isinstance(value, UploadFile):
                raise _invalid(key, "must be a text field", "string_type")
            elif key in text:
                raise _invalid(key, "field given twice", "duplicate")
            elif not (value == "" and key in OPTIONAL):
                text[key] = value
    finally:
        await form.close()
    try:
        fields = ReportIn.model_validate(text)
    except ValidationError as e:
        raise Unprocessable(
            "request validation failed",
            details=[
                {"loc": ["body", *e_["loc"]], "msg": e_["msg"], "type": e_["type"]}
                for e_ in e.errors()
            ],
        ) from None
    return ReportForm(fields, shot, request.headers.get("user-agent", "")[:1000])

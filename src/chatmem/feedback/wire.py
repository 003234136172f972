"""Request models and row → JSON serialisers for ratings and problem reports.

The ten dislike reasons (seed 001 (docs/specs.md) names four — incorrect_fact, outdated, unsafe, other — and fixes
the count at ten; the rest cover the usual complaints about an answer):

- ``incorrect_fact``       states something false
- ``outdated``             was true once, not any more
- ``unsafe``               harmful or inappropriate content
- ``unhelpful``            does not help with the request
- ``too_long`` / ``too_short``
- ``wrong_language``       answered in another language than asked
- ``ignored_instructions`` did not follow the user's or project's instructions
- ``bad_formatting``       broken markdown, code or tables
- ``other``                anything else (say what in ``comment``)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ..contracts.base import Input, Output, when_present

Reason = Literal[
    "incorrect_fact",
    "outdated",
    "unsafe",
    "unhelpful",
    "too_long",
    "too_short",
    "wrong_language",
    "ignored_instructions",
    "bad_formatting",
    "other",
]
REASONS: tuple[str, ...] = Reason.__args__  # type: ignore[attr-defined]

COMMENT_MAX = 500
DESCRIPTION_MAX = 5000


class FeedbackIn(Input):
    """``feedback: ""`` removes the caller's rating; reasons and comment only stick to a dislike."""

    feedback: Literal["like", "dislike", ""]
    reasons: list[Reason] = Field(default_factory=list, max_length=len(REASONS))
    comment: str = Field(default="", max_length=COMMENT_MAX)

    @field_validator("reasons")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))


class RatingOut(Output):
    rating: Literal["like", "dislike"]
    reasons: list[str]
    comment: str
    created_at: int
    updated_at: int


class WorkspaceRating(RatingOut):
    id: str
    message_id: str
    conversation_id: str
    user_id: str
    user_email: str


class WorkspaceRatingPage(Output):
    items: list[WorkspaceRating]
    next_cursor: str | None = None


class MessageRating(Output):
    message_id: str
    feedback: RatingOut | None = Field(description="the caller's rating, null when none")


def rating_out(row) -> dict | None:
    """The caller's rating. ``model_id`` stays in the table for admins: a fast-mode answer's real
    model is masked from users."""
    if row is None:
        return None
    return {
        "rating": row.rating,
        "reasons": list(row.reasons or []),
        "comment": row.comment,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


class ReportIn(Input):
    """The text fields of a problem report (the screenshot travels beside them as a file)."""

    description: str = Field(min_length=1, max_length=DESCRIPTION_MAX)
    message_id: str | None = Field(default=None, max_length=64)
    conversation_id: str | None = Field(default=None, max_length=64)
    page_path: str = Field(default="", max_length=2048)
    viewport_width: int = Field(default=0, ge=0, le=100_000)
    viewport_height: int = Field(default=0, ge=0, le=100_000)

    @field_validator("description")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("description must not be blank")
        return v


class Screenshot(Output):
    mime: str
    width: int
    height: int


class ReportOut(Output):
    id: str
    message_id: str | None
    conversation_id: str | None
    conversation_title: str
    workspace_id: str = Field(description="the conversation's workspace ('' = personal)")
    description: str
    page_path: str
    user_agent: str
    viewport_width: int
    viewport_height: int
    created_at: int
    screenshot: Screenshot | None
    user_id: str | None = when_present("admin view only")
    user_email: str | None = when_present("admin view only")


class ReportPage(Output):
    items: list[ReportOut]
    next_cursor: str | None = None


class ReportUpload(ReportIn):
    """The multipart form of ``POST /api/user-feedback`` (documentation: form.py parses it)."""

    screenshot: bytes | None = Field(
        default=None,
        description="a PNG or JPEG file, at most 3 MiB",
        json_schema_extra={"format": "binary"},
    )


def report_out(row, *, admin: bool = False) -> dict:
    m = row._mapping
    out = {
        k: m[k]
        for k in (
            "id",
            "message_id",
            "conversation_id",
            "conversation_title",
            "workspace_id",
            "description",
            "page_path",
            "user_agent",
            "viewport_width",
            "viewport_height",
            "created_at",
        )
    }
    has_shot = m["has_screenshot"] if "has_screenshot" in m else m["screenshot"] is not None
    out["screenshot"] = (
        {
            "mime": m["screenshot_mime"],
            "width": m["screenshot_width"],
            "height": m["screenshot_height"],
        }
        if has_shot
        else None
    )
    if admin:
        out["user_id"] = m["user_id"]
        out["user_email"] = m["user_email"]
    return out

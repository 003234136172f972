"""Request and response models of the admin console (``/api/admin/...``)."""

from __future__ import annotations

from pydantic import Field

from ..contracts.base import Email, Input, Output


class AdminUserOut(Output):
    id: str
    email: str
    name: str
    role: str = Field(description="user | admin")
    disabled: bool = Field(description="a disabled user cannot log in or use a key")
    has_password: bool
    created_at: int


class AdminUserPage(Output):
    items: list[AdminUserOut]


class AdminUserIn(Input):
    email: Email
    name: str = Field(default="", max_length=120)
    password: str | None = Field(
        default=None, min_length=8, max_length=1024, description="none: send a login link"
    )
    admin: bool = False


class AdminUserPatch(Input):
    role: str | None = Field(default=None, pattern="^(user|admin)$")
    disabled: bool | None = None


class AdminPasswordIn(Input):
    password: str = Field(min_length=8, max_length=1024)


class LoginLinkOut(Output):
    url: str = Field(description="a one-time login link; it works once, until expires_at")
    expires_at: int


class UsageRow(Output):
    day: int = Field(description="the UTC day's start, epoch ms")
    user_id: str
    user_email: str
    model_id: str
    answers: int
    input_tokens: int
    output_tokens: int
    cost: float = Field(description="USD")


class AdminUsageOut(Output):
    since: int
    rows: list[UsageRow]


class ModelRatings(Output):
    model_id: str
    likes: int
    dislikes: int
    reasons: dict[str, int] = Field(description="dislike reason → how many ratings gave it")


class RatingComment(Output):
    model_id: str
    rating: str
    reasons: list[str]
    comment: str
    user_email: str
    updated_at: int


class RatingSummary(Output):
    since: int
    models: list[ModelRatings]
    recent: list[RatingComment] = Field(description="the newest ratings with reasons or a comment")

"""API errors: one exception type carrying status, code, message and details.

Services raise these; the app turns them into ``{"error": {"code", "message", "details"}}`` with the
right status. Keeping them framework-free lets services and pure modules raise them too.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        details: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        if status:
            self.status = status
        self.details = details

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class BadRequest(ApiError):
    status, code = 400, "bad_request"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class TooLarge(ApiError):
    status, code = 413, "payload_too_large"


class Unprocessable(ApiError):
    status, code = 422, "validation_error"


class TooManyRequests(ApiError):
    status, code = 429, "too_many_requests"

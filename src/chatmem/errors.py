"""API errors: one exception type carrying status, code, message and details.

Services raise these; the app turns them into ``{"error": {"code", "message", "details"}}`` with the
right status. Keeping them framework-free lets services and pure modules raise them too.
"""

from __future__ import annotations

from typing import Any, TypeVar


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
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.headers = dict(headers or {})
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


R = TypeVar("R")


def found(row: R | None, message: str, *, code: str = "not_found", details: Any = None) -> R:
    """``row``, or ``NotFound(message)`` when it is None: the one "find it or 404" of the stores
    (a row the caller does not own is looked up with the owner in the query, so it is None too)."""
    if row is None:
        raise NotFound(message, code=code, details=details)
    return row


class Conflict(ApiError):
    status, code = 409, "conflict"


class TooLarge(ApiError):
    status, code = 413, "payload_too_large"


class Unprocessable(ApiError):
    status, code = 422, "validation_error"


class TooManyRequests(ApiError):
    """429; ``retry_after_s`` becomes the ``Retry-After`` header and ``details.retry_after_s``."""

    status, code = 429, "too_many_requests"

    def __init__(self, message: str, *, retry_after_s: int | None = None, **kw: Any) -> None:
        if retry_after_s is not None:
            kw["headers"] = {**(kw.get("headers") or {}), "Retry-After": str(retry_after_s)}
            kw["details"] = {**(kw.get("details") or {}), "retry_after_s": retry_after_s}
        super().__init__(message, **kw)


class ServiceUnavailable(ApiError):
    """503: a dependency (the database) failed transiently; the request may be retried."""

    status, code = 503, "service_unavailable"

"""Feedback routes: message ratings, problem reports, and the admin report reader."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request, Response

from ..auth.deps import current_admin, current_user, get_runtime
from ..auth.models import Principal
from ..contracts.errors import AUTHED, errors
from ..contracts.openapi import schema_ref
from ..runtime import Runtime
from . import ratings, reports
from .form import read_report_form
from .wire import FeedbackIn, MessageRating, ReportOut, ReportPage, ReportUpload

BINARY = {"type": "string", "format": "binary"}

router = APIRouter(tags=["feedback"], responses=errors(*AUTHED))


@router.post(
    "/api/conversations/{cid}/messages/{mid}/feedback",
    response_model=MessageRating,
    responses=errors(404, 409),
)
async def rate_message(
    cid: str,
    mid: str,
    body: FeedbackIn,
    p: Principal = Depends(current_user),
    rt: Runtime = Depends(get_runtime),
):
    return await ratings.rate(rt.db, p, cid, mid, body)


@router.get(
    "/api/conversations/{cid}/messages/{mid}/feedback",
    response_model=MessageRating,
    responses=errors(404),
)
async def get_rating(
    cid: str, mid: str, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await ratings.get(rt.db, p, cid, mid)


@router.post(
    "/api/user-feedback",
    status_code=201,
    response_model=ReportOut,
    responses=errors(404, 413, 415, 429),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": schema_ref(ReportUpload)}},
        }
    },
)
async def report_problem(
    request: Request, p: Principal = Depends(current_user), rt: Runtime = Depends(get_runtime)
):
    return await reports.submit(rt.db, p, await read_report_form(request))


@router.get("/api/admin/user-feedback", response_model=ReportPage)
async def list_reports(
    cursor: str | None = None,
    limit: int = Query(50, ge=1, le=200),
    _admin: Principal = Depends(current_admin),
    rt: Runtime = Depends(get_runtime),
):
    return await reports.list_reports(rt.db, cursor, limit)


@router.get(
    "/api/admin/user-feedback/{rid}/screenshot",
    response_class=Response,
    responses={
        **errors(404),
        200: {
            "description": "the screenshot image",
            "content": {
                "image/png": {"schema": BINARY},
                "image/jpeg": {"schema": BINARY},
            },
        },
    },
)
async def report_screenshot(
    rid: str, _admin: Principal = Depends(current_admin), rt: Runtime = Depends(get_runtime)
):
    data, mime = await reports.screenshot(rt.db, rid)
    return Response(
        data,
        media_type=mime,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"},
    )

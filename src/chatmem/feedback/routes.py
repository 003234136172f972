"""Feedback routes: message ratings, problem reports, and the admin report reader."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from ..auth.deps import (
    CurrentAdmin,
    CurrentUser,
    RuntimeDep,
)
from ..contracts.errors import AUTHED, errors
from ..contracts.openapi import schema_ref
from . import ratings, reports
from .form import read_report_form
from .wire import (
    FeedbackIn,
    MessageRating,
    ReportOut,
    ReportPage,
    ReportUpload,
    WorkspaceRatingPage,
)

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
    p: CurrentUser,
    rt: RuntimeDep,
):
    return await ratings.rate(rt.db, p, cid, mid, body)


@router.get(
    "/api/conversations/{cid}/messages/{mid}/feedback",
    response_model=MessageRating,
    responses=errors(404),
)
async def get_rating(cid: str, mid: str, p: CurrentUser, rt: RuntimeDep):
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
async def report_problem(request: Request, p: CurrentUser, rt: RuntimeDep):
    return await reports.submit(rt.db, p, await read_report_form(request))


@router.get(
    "/api/workspaces/{wid}/feedback",
    response_model=WorkspaceRatingPage,
    responses=errors(403, 404),
)
async def workspace_ratings(
    wid: str,
    p: CurrentUser,
    rt: RuntimeDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
):
    """The ratings members gave in the workspace's conversations (owner and admins only)."""
    return await ratings.workspace_ratings(rt.db, p, wid, cursor, limit)


@router.get("/api/admin/user-feedback", response_model=ReportPage)
async def list_reports(
    _admin: CurrentAdmin,
    rt: RuntimeDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
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
async def report_screenshot(rid: str, _admin: CurrentAdmin, rt: RuntimeDep):
    data, mime = await reports.screenshot(rt.db, rid)
    return Response(
        data,
        media_type=mime,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"},
    )

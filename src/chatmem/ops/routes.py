"""The operator's HTTP endpoints: ``/api/health``, ``/api/ready`` and ``/metrics``.

``/metrics`` on the API port is served only when ``CHATMEM_METRICS_TOKEN`` is set, and then only
to ``Authorization: Bearer <token>`` (404 without a token configured, so nothing is exposed by
default; 401 for a wrong one). The admin listener (admin.py) serves the same three without a
token on its own address, for a private network.
"""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from pydantic import Field

from ..auth.deps import RuntimeDep
from ..contracts.base import Output
from ..errors import NotFound, Unauthorized
from . import health as checks
from . import metrics_view

router = APIRouter(tags=["meta"])


class Health(Output):
    ok: bool
    database: str = Field(description="sqlite | postgresql")


class Check(Output):
    ok: bool
    detail: str


class Readiness(Output):
    ok: bool = Field(description="true when every check passed (then the status is 200, else 503)")
    checks: dict[str, Check] = Field(description="database, migrations, workers")


@router.get("/api/health", response_model=Health)
async def health(rt: RuntimeDep):
    """Liveness: the process and its database answer."""
    return await checks.health(rt)


@router.get(
    "/api/ready",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Not ready: a check failed"}},
)
async def ready(rt: RuntimeDep):
    """Readiness: database reachable, migrations current, a job worker's heartbeat seen."""
    out = await checks.readiness(rt)
    return JSONResponse(Readiness.model_validate(out).model_dump(), 200 if out["ok"] else 503)


def authorized(request: Request, token: str) -> bool:
    scheme, _, sent = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        sent.strip().encode("utf-8", "surrogateescape"), token.encode()
    )


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, rt: RuntimeDep):
    token = rt.settings.metrics_token
    if not token:
        raise NotFound("not found")
    if not authorized(request, token):
        raise Unauthorized("use 'Authorization: Bearer <CHATMEM_METRICS_TOKEN>'")
    return Response(await metrics_view.exposition(rt), media_type=CONTENT_TYPE_LATEST)

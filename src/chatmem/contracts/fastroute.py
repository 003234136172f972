"""A route whose common request skips FastAPI's generic per-request machinery (the two hot routes).

Why it exists: a demo turn is two requests, ``POST /api/conversations`` and ``POST
/api/conversations/{cid}/messages``. For each, FastAPI 0.165's request handler solves the
dependency tree generically (per sub-dependency: a recursive solve, its cache key through
``inspect.unwrap``, three callable classifications, four parameter passes), parses the
content type with ``email.message``, wraps each phase in a telemetry operation and serialises
through the generic path: ~45 µs of a ~90 µs route in a tight loop, two to three times that
inside a whole request. A ``FastRoute`` answers the request the way that handler would, doing
only what the route's shape needs:

- ``content-type: application/json`` exactly, a body that parses (``Request.json``, as FastAPI)
  and validates against the body field (the same ``ModelField.validate``), else the request is
  handed to FastAPI's own handler, which answers it as before (its 422 / 400 / 415 and their
  bodies are FastAPI's). The body is cached on the ``Request``: nothing is read twice.
- the route's dependencies are called in their declared order with the request, as FastAPI
  calls them (each is a coroutine taking only the request: ``current_user``, ``get_runtime``);
  one that raises raises the same error FastAPI would (it solves them before the body, so the
  answer is the same whichever fails).
- the endpoint's answer: a ``Response`` is returned as it is; anything else is validated and
  dumped to JSON by the route's response field with the route's settings, as FastAPI's
  ``dump_json`` path does (``ResponseValidationError`` the same way), with the route's status.

A route whose shape is anything else (query, header or cookie parameters, a path parameter that
is not a plain ``str``, an optional or embedded or form body, a ``Response`` or background-task
parameter, a dependency with parameters of its own or a generator, no response model, a custom
response class) keeps FastAPI's handler for every request, and so does every request while
FastAPI's own telemetry is active (OpenTelemetry configured: its spans and data stay FastAPI's)
or while dependency overrides are set. The OpenAPI document is built from the route's fields,
which are FastAPI's: unchanged (tests/test_openapi_contract.py). ``tests/test_fastroute.py``
answers a corpus of requests both ways and compares status, headers and body byte for byte.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import params
from fastapi.datastructures import DefaultPlaceholder
from fastapi.exceptions import ResponseValidationError
from fastapi.routing import APIRoute
from fastapi.telemetry import get_telemetry_data
from fastapi.utils import is_body_allowed_for_status_code
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY
from starlette.requests import Request
from starlette.responses import Response

try:  # FastAPI's private pieces the fast path mirrors; without them every request is FastAPI's
    from fastapi._body_limit import get_body_limit_error
    from fastapi.routing import _effective_route_context_var, _extract_endpoint_context
except ImportError:  # pragma: no cover - another FastAPI
    _effective_route_context_var = None  # type: ignore[assignment]

Handler = Callable[[Request], Coroutine[Any, Any, Response]]
JSON = "application/json"
#: switched off by tests to answer with FastAPI's handler only (the comparison's other side)
ENABLED = True


class _Plan:
    """What a request of the route needs, resolved once when the route's handler is built."""

    def __init__(self, route: Any) -> None:
        d = route.dependant
        self.route = route
        self.call = d.call
        #: (name, call, the call's request parameter): called with the request by keyword, a
        #: call listed twice once (FastAPI's per-request dependency cache)
        self.deps = [(sub.name, sub.call, sub.request_param_name) for sub in d.dependencies]
        self.path_names = [f.name for f in d.path_params]
        self.request_name = d.request_param_name
        #: the field FastAPI's ``request_body_to_args`` validates a single, not embedded body with
        self.body = d.body_params[0] if d.body_params else None
        self.body_name = self.body.name if self.body is not None else None
        self.out = route.response_field
        self.status = route.status_code
        self.dump = {
            "include": route.response_model_include,
            "exclude": route.response_model_exclude,
            "by_alias": route.response_model_by_alias,
            "exclude_unset": route.response_model_exclude_unset,
            "exclude_defaults": route.response_model_exclude_defaults,
            "exclude_none": route.response_model_exclude_none,
        }
        self.overrides = route.dependency_overrides_provider


def _plain_str(field: Any) -> bool:
    info = field.field_info
    return info.annotation is str and not info.metadata and info.alias in (None, field.name)


def _simple_dependency(sub: Any) -> bool:
    """A coroutine dependency that takes the request and nothing else."""
    return (
        sub.name is not None
        and not sub.dependencies
        and not (sub.path_params or sub.query_params or sub.header_params)
        and not (sub.cookie_params or sub.body_params)
        and sub.websocket_param_name is None
        and sub.http_connection_param_name is None
        and sub.response_param_name is None
        and sub.background_tasks_param_name is None
        and sub.security_scopes_param_name is None
        and not sub.own_oauth_scopes
        and sub.use_cache
        and sub.scope is None
        and sub.concurrency is None
        and inspect.iscoroutinefunction(sub.call)
    )


def _json_model_body(route: Any) -> bool:
    body = route.dependant.body_params
    if not body:
        return True
    info = body[0].field_info
    model = info.annotation
    return (
        len(body) == 1
        and not route._embed_body_fields
        and not getattr(info, "embed", None)
        and not isinstance(info, params.Form)
        and info.is_required()
        and inspect.isclass(model)
        and issubclass(model, BaseModel)
    )


def plan_for(route: Any) -> _Plan | None:
    """The fast path's plan for an (effective) API route, or None when its shape is not covered."""
    d = route.dependant
    if (
        d is None
        or d.query_params
        or d.header_params
        or d.cookie_params
        or d.websocket_param_name
        or d.http_connection_param_name
        or d.response_param_name
        or d.background_tasks_param_name
        or d.security_scopes_param_name
        or route.response_field is None
        or route.stream_item_field is not None
        or route.is_json_stream
        or not isinstance(route.response_class, DefaultPlaceholder)
        or not inspect.iscoroutinefunction(d.call)
    ):
        return None
    if not all(_plain_str(f) for f in d.path_params):
        return None
    if not all(_simple_dependency(sub) for sub in d.dependencies):
        return None
    if not _json_model_body(route):
        return None
    return _Plan(route)


def _effective(route: APIRoute) -> Any:
    """The route as it is built (an included router's effective context, as FastAPI's own
    ``get_route_handler`` resolves it)."""
    ctx = _effective_route_context_var.get() if _effective_route_context_var else None
    return ctx if ctx is not None and ctx.original_route is route else route


class FastRoute(APIRoute):
    """An ``APIRoute`` answering its common request without FastAPI's generic handler."""

    def get_route_handler(self) -> Handler:
        original = super().get_route_handler()
        if _effective_route_context_var is None:  # pragma: no cover - another FastAPI
            return original
        plan = plan_for(_effective(self))
        if plan is None:
            return original
        handler = _fast_handler(plan, original)
        handler.fast_plan = plan  # type: ignore[attr-defined]
        return handler


def _fast_handler(plan: _Plan, original: Handler) -> Handler:
    async def handler(request: Request) -> Response:
        overrides = plan.overrides
        if (
            not ENABLED
            or (overrides is not None and overrides.dependency_overrides)
            or get_telemetry_data() is not None
        ):
            return await original(request)
        values: dict[str, Any] = {}
        if plan.body is not None:
            body = await _json_body(request)
            if body is _FALLBACK:
                return await original(request)
            value, errors = plan.body.validate(body, {}, loc=("body",))
            if errors:
                return await original(request)
            values[plan.body_name] = value  # type: ignore[index]
        solved: dict[Any, Any] = {}
        for name, call, request_name in plan.deps:
            if call in solved:
                values[name] = solved[call]
                continue
            got = await (call(**{request_name: request}) if request_name else call())
            values[name] = solved[call] = got
        path_params = request.path_params
        for name in plan.path_names:
            values[name] = path_params[name]
        if plan.request_name is not None:
            values[plan.request_name] = request
        raw = await plan.call(**values)
        if isinstance(raw, Response):
            return raw
        return _serialise(plan, request, raw)

    return handler


_FALLBACK = object()


async def _json_body(request: Request) -> Any:
    """The request's JSON body as FastAPI reads it, or ``_FALLBACK`` for anything FastAPI would
    answer otherwise (another content type, an empty body, a JSON error). Errors reading the
    body are raised as FastAPI raises them (a body limit's 413, else 400)."""
    if request.headers.get("content-type") != JSON:
        return _FALLBACK
    try:
        raw = await request.body()
    except HTTPException:
        raise
    except Exception as e:
        if MAX_BODY_SIZE_SCOPE_KEY in request.scope and (error := get_body_limit_error(e)):
            raise error from e
        raise HTTPException(status_code=400, detail="There was an error parsing the body") from e
    if not raw:
        return _FALLBACK
    try:
        return await request.json()
    except Exception:  # FastAPI answers it: 422 json_invalid, or 400
        return _FALLBACK


def _serialise(plan: _Plan, request: Request, raw: Any) -> Response:
    """FastAPI's ``dump_json`` response path: validate against the response field, dump with
    the route's settings, answer with the route's status."""
    assert plan.out is not None
    value, errors = plan.out.validate(raw, {}, loc=("response",))
    if errors:
        ctx = _extract_endpoint_context(plan.call)
        mount_path = request.scope.get("root_path", "").rstrip("/")
        ctx["path"] = f"{request.method} {mount_path}{plan.route.dependant.path}"
        raise ResponseValidationError(errors=errors, body=raw, endpoint_ctx=ctx)
    content = plan.out.serialize_json(value, **plan.dump)
    kw: dict[str, Any] = {"background": None}
    if plan.status is not None:
        kw["status_code"] = plan.status
    response = Response(content=content, media_type=JSON, **kw)
    if not is_body_allowed_for_status_code(response.status_code):
        response.body = b""
    return response


def post(router: Any, path: str, **kw: Any) -> Callable[[Any], Any]:
    """``@router.post(path, **kw)`` with the route a ``FastRoute``."""

    def register(endpoint: Any) -> Any:
        router.add_api_route(path, endpoint, methods=["POST"], route_class_override=FastRoute, **kw)
        return endpoint

    return register

"""The OpenAPI document, finished: event schemas of streaming routes and clean stream media types.

Why it exists: FastAPI describes JSON bodies only. A route that answers a stream (or reads a
multipart form) points at models with ``schema_ref(Model)``; this adds those models to
``components.schemas`` and drops the empty ``application/json`` entry FastAPI puts beside every
extra response of a streaming route, so a generated client sees exactly what the route sends.
It also declares what the app answers for every route: 413, 503, and no NUL in URLs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .base import say_no_nul

REF = "#/components/schemas/{model}"
STREAM_TYPES = ("text/event-stream", "text/plain")
#: Models referenced by ``schema_ref`` (static documentation metadata, filled at import).
_REFERENCED: dict[str, type[BaseModel]] = {}


def schema_ref(model: type[BaseModel]) -> dict[str, str]:
    """A ``$ref`` to ``model``'s schema, which every app's document will include."""
    _REFERENCED[model.__name__] = model
    return {"$ref": REF.format(model=model.__name__)}


def _add_models(doc: dict, models: Iterable[type[BaseModel]]) -> None:
    _, top = models_json_schema([(m, "serialization") for m in models], ref_template=REF)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in top.get("$defs", {}).items():
        schemas.setdefault(name, schema)


def _finish_streams(doc: dict) -> None:
    for ops in doc.get("paths", {}).values():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            for resp in op.get("responses", {}).values():
                content = resp.get("content") or {}
                streams = any(t in content for t in STREAM_TYPES)
                if streams and content.get("application/json", {}).get("schema", {}) == {}:
                    content.pop("application/json", None)


def _declare_everywhere(doc: dict) -> None:
    """Statuses the app answers for any route: the edge's request-body limit (413, before any
    route, so every operation that takes a body) and a briefly unavailable database (503 with
    Retry-After, db/faults.py)."""
    native = {"$ref": REF.format(model="ErrorResponse")}
    envelope = {"$ref": REF.format(model="Failure")}

    def entry(path: str, description: str) -> dict:
        schema = envelope if path.startswith("/rpc") else native
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    for path, ops in doc.get("paths", {}).items():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            if "requestBody" in op:
                op["responses"].setdefault(
                    "413", entry(path, "The request body exceeds the server's limit")
                )
            busy = entry(path, "The database is briefly unavailable; retry (Retry-After)")
            busy["headers"] = {"Retry-After": {"schema": {"type": "string"}}}
            op["responses"].setdefault("503", busy)


def _no_nul_in_urls(doc: dict) -> None:
    """The edge answers 400 to a NUL anywhere in the path or query (app.RejectNulInUrl), so every
    free-text path and query parameter says it takes none (a generated client, or schemathesis'
    positive-data check, then never sends a URL the server refuses)."""
    for ops in doc.get("paths", {}).values():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            for param in op.get("parameters", ()):
                if param.get("in") in ("path", "query") and "schema" in param:
                    say_no_nul(param["schema"])


def install(app: FastAPI) -> None:
    """Replace ``app.openapi`` with the finished document (built once, then cached)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _add_models(doc, _REFERENCED.values())
            _finish_streams(doc)
            _declare_everywhere(doc)
            _no_nul_in_urls(doc)
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

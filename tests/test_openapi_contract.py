"""The OpenAPI document types every answer: a client generated from it is typed end to end.

Every native route has a response schema (no empty ``{}``), declares each error status with the
real error body, declares 202 where it answers 202, and streaming routes document their events.
(The behavioural check — real answers against this document — is tests/test_conformance.py.)
"""

from __future__ import annotations

import re

from chatmem.app import create_app
from chatmem.config import Settings

ERROR_REF = "#/components/schemas/ErrorResponse"


def _doc(tmp_path) -> dict:
    return create_app(Settings(database_url=f"sqlite:///{tmp_path}/x.db")).openapi()


def _ops(doc):
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            yield path, method, op


def test_every_success_and_error_is_typed(tmp_path):
    doc = _doc(tmp_path)
    assert doc["openapi"].startswith("3.1")
    for path, method, op in _ops(doc):
        where = f"{method.upper()} {path}"
        for status, resp in op["responses"].items():
            for media, body in (resp.get("content") or {}).items():
                assert body.get("schema") not in (None, {}), (where, status, media)
        if not path.startswith("/api/"):
            continue
        for status in ("400", "401", "422"):
            if status == "401" and path.startswith("/api/public/") and method == "get":
                continue
            if status == "401" and path in ("/api/health", "/api/auth/login", "/api/auth/logout"):
                continue
            if path in ("/api/health", "/api/ready"):  # probes: no input, no auth
                continue
            resp = op["responses"].get(status)
            assert resp, (where, status)
            ref = resp["content"]["application/json"]["schema"]["$ref"]
            assert ref == ERROR_REF, (where, status, ref)
        if "{" in path and path != "/api/health":
            assert "404" in op["responses"], where


def test_error_schema_is_the_real_body(tmp_path):
    schemas = _doc(tmp_path)["components"]["schemas"]
    assert "HTTPValidationError" not in schemas  # FastAPI's default 422 shape is never declared
    assert schemas["ErrorResponse"]["required"] == ["error"]
    assert set(schemas["ErrorInfo"]["properties"]) == {"code", "message", "details"}


def test_turn_starts_declare_202_and_the_stream(tmp_path):
    doc = _doc(tmp_path)
    for path in ("/api/conversations/{cid}/messages", "/api/conversations/{cid}/regenerate"):
        responses = doc["paths"][path]["post"]["responses"]
        assert responses["202"]["content"]["application/json"]["schema"]["$ref"].endswith(
            "/TurnStarted"
        )
        sse = responses["200"]["content"]
        assert list(sse) == ["text/event-stream"]
        events = {
            e["properties"]["event"]["const"]: e["properties"]["data"]["contentSchema"]["$ref"]
            for e in sse["text/event-stream"]["schema"]["oneOf"]
        }
        assert {"message_start", "text_delta", "usage", "done", "error", "snapshot"} <= set(events)
        for ref in events.values():
            assert ref.split("/")[-1] in doc["components"]["schemas"]
    resume = doc["paths"]["/api/conversations/{cid}/messages/{mid}/stream"]["get"]["responses"]
    assert "204" in resume and list(resume["200"]["content"]) == ["text/event-stream"]
    assert "409" in doc["paths"]["/api/conversations/{cid}/messages"]["post"]["responses"]


def test_admin_and_optional_fields_are_absent_not_null(tmp_path):
    schemas = _doc(tmp_path)["components"]["schemas"]
    assert "cost" not in schemas["MessageOut"].get("required", [])
    assert "id" in schemas["MessageOut"]["required"]


def test_url_parameters_take_no_nul(tmp_path):
    """The edge answers 400 to a NUL anywhere in a URL, so no path or query string parameter's
    schema admits one (schemathesis found /context?message_id=…%00… answered 400)."""

    def strings(schema):
        if schema.get("type") == "string":
            yield schema
        for sub in schema.get("anyOf", ()):
            yield from strings(sub)
        if isinstance(schema.get("items"), dict):
            yield from strings(schema["items"])

    checked = 0
    for path, method, op in _ops(_doc(tmp_path)):
        for param in op.get("parameters", ()):
            if param["in"] not in ("path", "query"):
                continue
            for s in strings(param["schema"]):
                checked += 1
                if "enum" in s or "const" in s:
                    continue
                where = (method, path, param["name"])
                assert "pattern" in s, where
                assert not re.search(s["pattern"], "ab\x00cd"), where
    assert checked > 100

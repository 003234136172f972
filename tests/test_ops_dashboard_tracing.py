"""The Grafana dashboard matches what /metrics exports, and tracing spans really come out.

The dashboard (deploy/grafana/chatmem-dashboard.json) is only useful while its PromQL names
metrics the server exports: a renamed metric must fail here, not on an operator's blank panel.
Every metric family /metrics declares must also be on some panel (nothing exported unseen).

Tracing: with ``otel_enabled`` an in-memory exporter attached to the runtime's provider sees the
request span, the turn, the provider call and SQL statements, on both databases.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from tests.conftest import ApiUser, make_settings
from tests.test_observability import TOKEN, run_turn

DASHBOARD = Path(__file__).parents[1] / "deploy" / "grafana" / "chatmem-dashboard.json"
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "counter": ("_total",)}


@pytest.fixture
def settings(db_url):
    return make_settings(db_url, metrics_token=TOKEN, worker_heartbeat_s=0.2)


def exported_names(text: str) -> tuple[set[str], set[str]]:
    """(every sample name /metrics can carry, the family names) from its ``# TYPE`` lines."""
    names: set[str] = set()
    families: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, family, kind = line.split()
            if family.endswith("_created"):  # prometheus_client's start timestamps
                continue
            families.add(family)
            names.add(family)
            names.update(family + s for s in SUFFIXES.get(kind, ()))
    return names, families


def dashboard_exprs() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]


def test_dashboard_is_grafana_json_with_unique_panel_ids():
    doc = json.loads(DASHBOARD.read_text())
    assert doc["uid"] and doc["title"] and doc["schemaVersion"] >= 30
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    for expr in dashboard_exprs():
        assert expr.count("(") == expr.count(")"), expr


async def test_dashboard_metric_names_exist_in_metrics(new_user):
    u = await new_user()
    await run_turn(u)
    r = await u.client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200
    names, families = exported_names(r.text)
    used = {n for e in dashboard_exprs() for n in re.findall(r"\bchatmem_[a-z_]+\b", e)}
    assert used, "no chatmem metric in the dashboard"
    assert used <= names, f"dashboard names metrics /metrics lacks: {sorted(used - names)}"
    shown = {f for f in families if any(n == f or n.startswith(f + "_") for n in used)}
    assert families - shown == set(), f"exported but on no panel: {sorted(families - shown)}"


async def test_spans_for_request_turn_provider_and_sql(db_url):
    application = create_app(make_settings(db_url, otel_enabled=True, otel_exporter="none"))
    exporter = InMemorySpanExporter()
    rt = application.state.runtime
    assert rt.telemetry.tracing.enabled
    rt.telemetry.tracing.provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with application.router.lifespan_context(application):
        user, key = await auth_service.create_user(rt.db, "tracer@example.com")
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=application),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        )
        async with client:
            await run_turn(
                ApiUser(id=user["id"], email="tracer@example.com", key=key, client=client)
            )
    spans = exporter.get_finished_spans()
    by_name: dict[str, list] = {}
    for sp in spans:
        by_name.setdefault(sp.name, []).append(sp)
    post = "POST /api/conversations/{cid}/messages"  # request spans are named by route template
    assert post in by_name, sorted(by_name)
    assert by_name[post][0].attributes.get("http.request.method") == "POST"
    assert "chatmem.turn" in by_name and "chatmem.provider.stream" in by_name, sorted(by_name)
    turn = by_name["chatmem.turn"][0]
    provider = by_name["chatmem.provider.stream"][0]
    assert provider.parent is not None and provider.parent.span_id == turn.context.span_id
    sql = [sp for sp in spans if sp.attributes.get("db.system") == rt.db.dialect]
    assert any(sp.name == "INSERT" for sp in sql) and any(sp.name == "SELECT" for sp in sql)
    # SQL run for a request is a child in that request's trace
    post_traces = {sp.context.trace_id for sp in by_name[post]}
    assert any(sp.context.trace_id in post_traces and sp.parent for sp in sql)

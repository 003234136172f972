"""``chatmem config`` and the start-up check: the effective settings, secrets masked, and what is
wrong with them in words.

Why it exists: a self-hoster sets a dozen ``CHATMEM_*`` variables in a unit file or a compose
file and needs to see what the process actually got (without pasting API keys into a ticket),
and a typo must stop the process at start with one clear line per problem — not a traceback
from the first request that needs the model catalogue. ``problems`` checks what can be checked
without the network: the database URL's form, the model catalogue (models file, unknown
providers, default and fast models), enumerated settings, the admin listener address, tracing.
Reaching the database is the CLI's next step (``db_problem``).
"""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from typing import Any

from sqlalchemy.engine import make_url

from ..config import Settings
from ..db.engine import normalize_url
from ..observability import tracing
from ..providers.registry import GROUP, build_catalogue
from .admin import parse_listen

MASK = "********"
#: setting (or nested key) names whose values are secrets
SECRET = re.compile(r"(api_key|token|password|secret|authorization)", re.IGNORECASE)
CHOICES = {
    "log_level": ("debug", "info", "warning", "error"),
    "log_format": ("json", "text", "auto"),
    "otel_exporter": tracing.EXPORTERS,
    "memory_extractor": ("auto", "rules", "llm"),
    "recall_scope": ("conversation", "memory_scope"),
}


def mask(name: str, value: Any) -> Any:
    """``value`` with every secret in it replaced (recursively through lists and dicts)."""
    if isinstance(value, dict):
        return {k: mask(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(name, v) for v in value]
    if SECRET.search(name):
        return MASK if value else value
    if name.endswith("database_url") and isinstance(value, str):
        return masked_url(value)
    return value


def masked_url(url: str) -> str:
    try:
        u = make_url(url)
    except Exception:
        return url
    return u.render_as_string(hide_password=True) if u.password else url  # user:***@host


def effective(settings: Settings) -> dict[str, Any]:
    """Every setting with its effective value, secrets masked, in declaration order."""
    return {name: mask(name, getattr(settings, name)) for name in type(settings).model_fields}


def problems(settings: Settings) -> list[str]:
    """What is wrong with ``settings``, one sentence per problem (empty: fine)."""
    out: list[str] = []
    try:
        normalize_url(settings.database_url)
    except Exception as e:
        out.append(f"CHATMEM_DATABASE_URL: {e}")
    out += _catalogue_problems(settings)
    for name, allowed in CHOICES.items():
        value = getattr(settings, name)
        if value not in allowed:
            out.append(f"CHATMEM_{name.upper()}: {value!r} is not one of {', '.join(allowed)}")
    if settings.admin_listen:
        try:
            parse_listen(settings.admin_listen)
        except ValueError as e:
            out.append(f"CHATMEM_ADMIN_LISTEN: {e}")
    if settings.otel_enabled and not tracing.sdk_installed():
        out.append(
            "CHATMEM_OTEL_ENABLED: the OpenTelemetry SDK is missing: pip install 'chatmem[otel]'"
        )
    return out


def _catalogue_problems(settings: Settings) -> list[str]:
    where = (
        f"CHATMEM_MODELS_FILE ({settings.models_file})"
        if settings.models_file
        else "CHATMEM_MODELS"
    )
    try:
        models, _default, _fast = build_catalogue(settings)
    except FileNotFoundError:
        return [f"CHATMEM_MODELS_FILE: no file {settings.models_file}"]
    except (ValueError, TypeError, OSError) as e:  # JSON/TOML errors are ValueErrors
        return [f"{where}: {e}"]
    installed = {ep.name for ep in entry_points(group=GROUP)}
    return [
        f"{where}: model {m.id!r} names provider {m.provider!r}, which is not installed "
        f"(installed: {', '.join(sorted(installed))})"
        for m in models.values()
        if m.provider not in installed
    ]

"""Provider plugins and the model catalogue: which models exist and which provider serves each.

Providers are discovered through the ``chatmem.providers`` entry-point group (the built-in demo,
openai and anthropic register the same way as third-party ones) and constructed lazily with the
process Settings. The catalogue comes from settings: the always-present offline ``demo`` model,
``CHATMEM_MODELS`` (JSON list) and/or ``models_file`` (JSON or TOML), and a preset model for
openai/anthropic when their key is configured but no model of theirs is listed.

``fast`` is an alias resolved here, on the server: it names a real model whose id, label and
provider users never see (the message row keeps the real ones with ``fast = 1``).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ..errors import Unprocessable
from .base import ModelInfo, Provider

GROUP = "chatmem.providers"
FAST = "fast"
_FIELDS = {f.name for f in fields(ModelInfo)}

PRESETS: dict[str, dict[str, Any]] = {
    "openai": dict(
        context_window=128_000,
        max_output=4096,
        price_input=0.15,
        price_output=0.6,
        price_cache_read=0.075,
        encoding="o200k_base",
    ),
    "anthropic": dict(
        context_window=200_000,
        max_output=8192,
        price_input=3.0,
        price_output=15.0,
        price_cache_read=0.3,
        price_cache_write=3.75,
    ),
}


def model_from_dict(d: dict) -> ModelInfo:
    if not isinstance(d, dict) or not d.get("id") or not d.get("provider"):
        raise ValueError(f"a catalogue entry needs 'id' and 'provider': {d!r}")
    unknown = set(d) - _FIELDS
    if unknown:
        raise ValueError(f"unknown catalogue fields {sorted(unknown)} in {d['id']!r}")
    if d["id"] == FAST:
        raise ValueError("'fast' is reserved for the fast alias (set CHATMEM_FAST_MODEL)")
    return ModelInfo(**{**d, "label": d.get("label") or d["id"]})


def _read_file(path: str) -> list[dict]:
    p = Path(path)
    raw = p.read_text(encoding="utf-8")
    data = tomllib.loads(raw) if p.suffix == ".toml" else json.loads(raw)
    if isinstance(data, dict):
        data = data.get("models", [])
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of models or {{'models': [...]}}")
    return data


def build_catalogue(settings) -> tuple[dict[str, ModelInfo], str, str]:
    """(models by id, default model id, fast target id) from settings."""
    entries = [
        dict(
            id="demo",
            provider="demo",
            label="Demo (offline)",
            context_window=settings.demo_context_window,
            max_output=settings.reserved_output_tokens,
        )
    ]
    if settings.models_file:
        entries += _read_file(settings.models_file)
    entries += list(settings.models or [])
    models: dict[str, ModelInfo] = {}
    for d in entries:
        m = model_from_dict(d)
        models[m.id] = m
    providers = {m.provider for m in models.values()}
    if (settings.openai_api_key or settings.openai_base_url) and "openai" not in providers:
        models[settings.openai_model] = ModelInfo(
            id=settings.openai_model,
            provider="openai",
            label=settings.openai_model,
            **PRESETS["openai"],
        )
    if settings.anthropic_api_key and "anthropic" not in providers:
        models[settings.anthropic_model] = ModelInfo(
            id=settings.anthropic_model,
            provider="anthropic",
            label=settings.anthropic_model,
            **PRESETS["anthropic"],
        )
    default = settings.default_model
    if not default:
        default = next((i for i, m in models.items() if m.provider != "demo"), "demo")
    if default not in models:
        raise ValueError(f"default model {default!r} is not in the catalogue")
    fast = settings.fast_model or default
    if fast not in models:
        raise ValueError(f"fast model {fast!r} is not in the catalogue")
    return models, default, fast


class Registry:
    """Per-runtime providers (constructed on first use) and the resolved catalogue."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self.models, self.default_id, self.fast_id = build_catalogue(settings)
        self._providers: dict[str, Provider] = {}
        self._classes = {ep.name: ep for ep in entry_points(group=GROUP)}

    def register(self, name: str, provider: Provider) -> None:
        """Use this provider instance for ``name`` (third parties in code, tests)."""
        self._providers[name] = provider

    def provider(self, name: str) -> Provider:
        if name not in self._providers:
            ep = self._classes.get(name)
            if ep is None:
                raise Unprocessable(
                    f"no provider named {name!r} is installed",
                    code="unknown_provider",
                    details={"provider": name},
                )
            self._providers[name] = ep.load()(self.settings)
        return self._providers[name]

    def resolve(self, model_id: str | None) -> ModelInfo:
        """The model to run for a requested id ('' / None = the default; 'fast' = the alias)."""
        mid = model_id or self.default_id
        if mid == FAST:
            return replace(self.models[self.fast_id], fast=True)
        m = self.models.get(mid)
        if m is None:
            raise Unprocessable(
                f"unknown model {mid!r}",
                code="unknown_model",
                details={"model": mid, "available": self.public_ids()},
            )
        return m

    def public_ids(self) -> list[str]:
        return [FAST, *self.models]

    def has_real_model(self) -> bool:
        return self.models[self.default_id].provider != "demo"

    def public_models(self, *, is_admin: bool) -> dict:
        items = [
            {
                "id": FAST,
                "label": "Fast",
                "provider": "",
                "fast": True,
                "context_window": self.models[self.fast_id].context_window,
                "max_output": self.models[self.fast_id].max_output,
                "credits_multiplier": self.models[self.fast_id].credits_multiplier,
                "default": False,
            }
        ]
        for m in self.models.values():
            out = {
                "id": m.id,
                "label": m.label or m.id,
                "provider": m.provider,
                "fast": False,
                "context_window": m.context_window,
                "max_output": m.max_output,
                "credits_multiplier": m.credits_multiplier,
                "default": m.id == self.default_id,
            }
            if is_admin:
                out["prices"] = {
                    "input": m.price_input,
                    "output": m.price_output,
                    "cache_read": m.price_cache_read,
                    "cache_write": m.price_cache_write,
                    "per": "1M tokens",
                }
            items.append(out)
        return {"items": items, "next_cursor": None, "default": self.default_id}

    async def aclose(self) -> None:
        for p in self._providers.values():
            close = getattr(p, "aclose", None)
            if close is not None:
                await close()
        self._providers.clear()

"""Settings, read from the environment (prefix ``CHATMEM_``) when asked for, never at import time.

Everything a deployment may tune lives here so that tests can build an app with explicit settings
and two apps with different settings can live in one process.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CHATMEM_", extra="ignore")

    database_url: str = "sqlite:///./data/chatmem.db"
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = ""  # used in the login link printed at first start; default http://host:port

    # limits
    max_message_bytes: int = 256 * 1024
    page_default: int = 30
    page_max: int = 200

    # web sessions
    session_ttl_s: int = 14 * 24 * 3600
    cookie_secure: bool = False

    # generation
    lease_ttl_s: int = 30
    turn_cap_s: int = 90 * 60
    max_concurrent_turns: int = 3
    flush_interval_ms: int = 250
    ping_interval_s: float = 15.0
    event_retention_s: int = 2 * 3600
    sweep_interval_s: float = 5.0
    default_model: str = "demo"

    # demo provider
    demo_delay_ms: int = 20
    demo_min_tokens: int = 40
    demo_context_window: int = 8192

    # context and compaction
    reserved_output_tokens: int = 1024
    keep_recent_rounds: int = 6
    memory_budget_tokens: int = 800

    # memory
    memory_enabled: bool = True  # the admin-wide switch
    memory_per_turn_cap: int = 5
    memory_per_turn_cap_agent: int = 2

    # jobs
    run_worker: bool = True  # `chatmem serve --no-worker` turns the in-process job worker off
    job_visibility_timeout_s: int = 120
    job_poll_interval_s: float = 0.5

    models_file: str = ""  # optional JSON/TOML catalogue path
    extra: dict = Field(default_factory=dict)


def get_settings(**overrides) -> Settings:
    """Build settings from the environment, with explicit overrides winning."""
    return Settings(**overrides)

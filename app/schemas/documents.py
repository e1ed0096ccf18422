"""Request/response models for documents and the pipeline."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.domain.names import BIDI_RANGE
from app.domain.projects import PROJECT_ID_PATTERN

DocumentStatus = Literal["pending", "processing", "processed", "failed"]
# 1-256 characters without "/", control or bidirectional-control characters, and not "." or "..".
_ID_CHAR = rf"[^/.\x00-\x1f\x7f{BIDI_RANGE}]"
_ID_CHAR_OR_DOT = rf"[^/\x00-\x1f\x7f{BIDI_RANGE}]"
DOCUMENT_ID_PATTERN = (rf"^(?:{_ID_CHAR}{_ID_CHAR_OR_DOT}{{0,255}}|\.{_ID_CHAR}{_ID_CHAR_OR_DOT}{{0,254}}"
                       rf"|\.\.{_ID_CHAR_OR_DOT}{{1,254}})$")
_UNSTORABLE = re.compile(rf"[\x00-\x1f\x7f\ud800-\udfff{BIDI_RANGE}]")
MAX_METADATA_DEPTH = 32
MAX_METADATA_BYTES = 64 * 1024


def _storable(value: str | None, what: str) -> str | None:
    if value is not None and _UNSTORABLE.search(value):
        raise ValueError(f"{what} must not contain control characters, bidirectional controls or lone surrogates")
    return value


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, counted without recursion and stopping once past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="Document text; sanitised (trimmed, control characters removed) before hashing.")
    id: str | None = Field(None, pattern=DOCUMENT_ID_PATTERN, description="Defaults to `doc-` + md5(text).")
    file_path: str | None = Field(None, max_length=1024, description="Source name; stored as its basename.")
    metadata: dict[str, Any] | None = None

    @field_validator("id")
    @classmethod
    def _id_storable(cls, value: str | None) -> str | None:
        return _storable(value, "id")

    @field_validator("file_path")
    @classmethod
    def _path_storable(cls, value: str | None) -> str | None:
        return _storable(value, "file_path")

    @field_validator("metadata")
    @classmethod
    def _metadata_storable(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        if _depth(value, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
            raise ValueError(f"metadata must not be nested more than {MAX_METADATA_DEPTH} levels deep")
        try:
            encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
            encoded.encode("utf-8")
        except (ValueError, UnicodeEncodeError) as exc:
            raise ValueError("metadata must be plain JSON without lone surrogates or NaN/Infinity") from exc
        if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
            raise ValueError(f"metadata must be at most {MAX_METADATA_BYTES} bytes as JSON")
        if "\\u0000" in encoded:
            raise ValueError("metadata must not contain NUL characters")
        return value


class IngestRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    documents: list[DocumentIn] = Field(min_length=1)
    wait: bool = False


class IngestItem(BaseModel):
    id: str | None
    status: Literal["pending", "duplicate", "processing", "processed", "failed", "rejected"]
    error: str | None = Field(None, description="Why this item was rejected (nothing stored for it).")
    file_path: str | None = None


class IngestResponse(BaseModel):
    documents: list[IngestItem]


class DocumentSummary(BaseModel):
    id: str
    status: DocumentStatus
    error: str | None
    file_path: str | None
    content_summary: str
    content_length: int
    chunks_count: int
    entities_count: int
    relations_count: int
    attempts: int
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class DocumentOut(DocumentSummary):
    llm_prompt_tokens: int
    llm_completion_tokens: int
    llm_calls: int
    embedding_tokens: int


class StatusCounts(BaseModel):
    pending: int = 0
    processing: int = 0
    processed: int = 0
    failed: int = 0


class DocumentList(BaseModel):
    documents: list[DocumentSummary]
    total: int = Field(description="Documents matching the status filter.")
    counts: StatusCounts = Field(description="All documents of the project by status.")


class ChunkOut(BaseModel):
    id: str
    order: int
    tokens: int
    start_token: int
    end_token: int
    content: str


class ChunkList(BaseModel):
    document_id: str
    chunks: list[ChunkOut]


class InFlight(BaseModel):
    id: str
    claimed_by: str | None
    heartbeat_at: datetime | None
    started_at: datetime | None
    attempts: int


class PipelineStatus(BaseModel):
    project_id: str
    queue_depth: int = Field(description="pending + processing documents of the project.")
    global_queue_depth: int = Field(description="pending + processing documents of all projects (shared workers); "
                                                "for a project-scoped API key, of its projects only.")
    by_status: StatusCounts
    in_flight: list[InFlight]
    local_worker: dict[str, Any] | None = Field(
        None, description="This process's worker, if it runs one (not shown to a project-scoped API key).")


class RetryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)

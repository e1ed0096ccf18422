"""Request/response models for documents and the pipeline."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from app.domain.names import BIDI_RANGE
from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.common import MAX_DOCUMENTS_ITEMS, MaxItems

DocumentStatus = Literal["pending", "processing", "processed", "failed", "cancelled"]
# Stages of a processing document; files are parsed by their upload request, before the document exists.
DocumentStage = Literal["chunking", "extracting", "merging", "summarising", "embedding"]
# 1-256 characters without "/", control or bidirectional-control characters, and not "." or "..".
_ID_CHAR = rf"[^/.\x00-\x1f\x7f{BIDI_RANGE}]"
_ID_CHAR_OR_DOT = rf"[^/\x00-\x1f\x7f{BIDI_RANGE}]"
DOCUMENT_ID_PATTERN = (
    rf"^(?:{_ID_CHAR}{_ID_CHAR_OR_DOT}{{0,255}}|\.{_ID_CHAR}{_ID_CHAR_OR_DOT}{{0,254}}"
    rf"|\.\.{_ID_CHAR_OR_DOT}{{1,254}})$"
)
_UNSTORABLE = re.compile(rf"[\x00-\x1f\x7f\ud800-\udfff{BIDI_RANGE}]")
MAX_METADATA_DEPTH = 32
MAX_METADATA_BYTES = 64 * 1024
# POST /documents/upload takes a multipart form, which has no pydantic model to carry its example.
UPLOAD_EXAMPLE: dict[str, Any] = {
    "requestBody": {
        "content": {
            "multipart/form-data": {
                "example": {
                    "files": ["# Onboarding\n\nAlice Chen leads the platform team in Berlin."],
                    "project_id": "default",
                    "wait": False,
                }
            }
        }
    }
}


def _storable(value: str | None, what: str) -> str | None:
    if value is not None and _UNSTORABLE.search(value):
        raise ValueError(f"{what} must not contain control characters, bidirectional controls or lone surrogates")
    return value


def _storable_id(value: str) -> str:
    return _storable(value, "id") or value


def _storable_path(value: str) -> str:
    return _storable(value, "file_path") or value


# Field types of documents, shared with the deletion requests and the LightRAG Server compatibility routes.
DocumentId = Annotated[str, Field(pattern=DOCUMENT_ID_PATTERN), AfterValidator(_storable_id)]
FilePath = Annotated[str, Field(max_length=1024), AfterValidator(_storable_path)]


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
    id: DocumentId | None = Field(None, description="Defaults to `doc-` + md5(text).")
    file_path: FilePath | None = Field(None, description="Source name; stored as its basename.")
    metadata: dict[str, Any] | None = None

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
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "documents": [
                        {
                            "text": "Alice Chen leads the platform team in Berlin. She reports to Bob Ortiz.",
                            "id": "onboarding-1",
                            "file_path": "onboarding.md",
                            "metadata": {"team": "platform"},
                        }
                    ],
                    "wait": False,
                }
            ]
        },
    )

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    documents: Annotated[list[DocumentIn], MaxItems(MAX_DOCUMENTS_ITEMS)] = Field(
        min_length=1, description="At most MAX_DOCUMENTS_PER_REQUEST documents."
    )
    wait: bool = False


class IngestItem(BaseModel):
    id: str | None
    status: Literal["pending", "duplicate", "processing", "processed", "failed", "cancelled", "rejected"]
    error: str | None = Field(None, description="Why this item was rejected (nothing stored for it).")
    file_path: str | None = None
    update_id: str | None = Field(
        None,
        description="The item gave an existing document (same id, or same file name with update=true) new text: "
        "the queued update of that document (see PUT /documents/{id}).",
    )


class IngestResponse(BaseModel):
    documents: list[IngestItem]


class ExtractionReportOut(BaseModel):
    chunks: int = Field(description="Chunks the document was split into.")
    entities: int = Field(description="Distinct entities the model extracted (relation ends not counted).")
    relations: int = Field(description="Distinct relations the model extracted.")
    unparseable_records: int = Field(description="Records in the model's answers that could not be read.")
    empty_chunks: int = Field(description="Chunks that yielded no entity and no relation.")
    failed_chunks: int = Field(
        description="Chunks whose answers held no usable record, even after one corrective retry."
    )
    retried_chunks: int = Field(0, description="Chunks whose first answer held no usable record.")
    runaway_answers: int = Field(
        0, description="Answers cut by their token cap or caught looping; the records before the cut were kept."
    )
    unembedded_items: int = Field(
        0,
        description="Chunks, entities and relations whose text the embedding endpoint "
        "refused (HTTP 400/422) in the last attempt: they have no current "
        "vector; the document's other items were embedded.",
    )
    embedding_warning: str | None = Field(None, description="Which inputs the embedding endpoint refused, and why.")
    truncated_names: int = Field(
        0,
        description="Entity names the model wrote too long, cut to ENTITY_NAME_MAX_LENGTH "
        "characters and 1,024 bytes of UTF-8 (a relation's two ends are "
        "indexed together, and an index row holds 2,704 bytes).",
    )
    judge_pairs_unasked: int = Field(
        0,
        description="With ENTITY_RESOLUTION=llm: candidate pairs of the document's names and stored entities "
        "over the judge's cap of 32 per document, not asked but listed as duplicate suggestions "
        "(GET /entities/duplicates) for a user to review.",
    )
    warning: str | None = Field(
        None,
        description='Set when extraction fell short, e.g. "the model returned no '
        'usable records": the document is processed (its chunks serve '
        "naive queries) but adds nothing to the graph.",
    )


class ProgressOut(BaseModel):
    chunks_total: int = Field(description="Chunks the document was split into (0 before chunking).")
    chunks_done: int = Field(description="Chunks whose extraction has finished.")
    llm_calls: int = Field(description="LLM calls of this attempt so far (cache hits not counted).")
    llm_prompt_tokens: int
    llm_completion_tokens: int
    embedding_tokens: int


class DocumentSummary(BaseModel):
    id: str
    status: DocumentStatus
    error: str | None = Field(description="Why the document failed, at which stage, and what to do about it.")
    stage: DocumentStage | None = Field(
        None, description="The stage being run (processing) or last reached (finished); null before its first claim."
    )
    progress: ProgressOut | None = Field(
        None,
        description="Figures of the current or last attempt, written at most once per "
        "PROGRESS_WRITE_INTERVAL while it runs.",
    )
    cancel_requested: bool = Field(False, description="A cancellation was asked; the worker stops at its next check.")
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
    extraction_report: ExtractionReportOut | None = Field(
        None, description="What extraction produced; null until the document's graph merge."
    )
    version: int = Field(1, description="Its version: 1, plus one per update applied (PUT /documents/{id}).")
    update_of: str | None = Field(
        None, description="On a queued update (`<id>@v<n>`), the document it updates; null on documents."
    )


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
    cancelled: int = 0


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
    file_path: str | None = Field(None, description="The document's file name, when it has one")
    claimed_by: str | None
    heartbeat_at: datetime | None
    started_at: datetime | None
    attempts: int
    stage: DocumentStage | None = None
    progress: ProgressOut | None = None
    cancel_requested: bool = False


class PipelineEvent(BaseModel):
    id: int = Field(description="Increasing per database; the SSE event id (resume with Last-Event-ID).")
    document_id: str
    kind: Literal["started", "finished", "failed", "retried", "cancelled"]
    detail: str | None = Field(None, description="Attempt and worker (started), or the reason (failed, cancelled).")
    created_at: datetime


class ProviderBudgetUse(BaseModel):
    kind: Literal["chat", "embeddings", "rerank"]
    model: str
    rpm: int = Field(description="Requests per minute allowed to the whole fleet (0 = unlimited).")
    tpm: int = Field(description="Tokens per minute allowed to the whole fleet (0 = unlimited).")
    max_concurrent: int = Field(description="Calls at once across the fleet (0 = unlimited).")
    requests_this_minute: int = Field(description="Requests granted since the current minute's window began.")
    tokens_this_minute: int = Field(description="Tokens granted in that window (estimates, corrected by usage).")
    in_flight: int = Field(description="Calls holding a lease now, across the fleet.")
    paused_for_seconds: float = Field(description="What is left of a pause the provider asked for (Retry-After).")
    rate_limited: int = Field(description="429 answers the fleet has met from this provider.")


class PipelineStatus(BaseModel):
    project_id: str
    queue_depth: int = Field(description="pending + processing documents of the project.")
    global_queue_depth: int = Field(
        description="pending + processing documents of all projects (shared workers); "
        "for a project-scoped API key, of its projects only."
    )
    by_status: StatusCounts
    in_flight: list[InFlight]
    local_worker: dict[str, Any] | None = Field(
        None, description="This process's worker, if it runs one (not shown to a project-scoped API key)."
    )
    recent_events: list[PipelineEvent] = Field(
        default_factory=list, description="The project's latest pipeline events, oldest first (at most 50)."
    )
    budget: list[ProviderBudgetUse] = Field(
        default_factory=list,
        description="The fleet's provider budgets (LLM_RPM, EMBEDDING_TPM, ...) and their use now, shared by every "
        "API and worker process; empty when no limit is set.",
    )


class RetryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"project_id": "default"}]})

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)


class RetriedDocuments(BaseModel):
    project_id: str
    document_ids: list[str] = Field(description="The failed documents put back in the queue.")


class CancelResult(BaseModel):
    id: str
    status: DocumentStatus = Field(
        description="`cancelled` for a pending document; `processing` (with "
        "cancel_requested) while its worker stops it."
    )
    cancel_requested: bool

"""Request/response models of the LightRAG Server compatibility routes, with LightRAG Server's field names.

The names carry a `Lightrag` prefix so they never collide with the service's own models in the OpenAPI
document. Fields LightRAG Server accepts but this service cannot honour are still declared, so that a
request using them is answered 501 by the router instead of being silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from app.schemas.common import MAX_DOCUMENTS_ITEMS, MAX_HISTORY_ITEMS, MAX_IDS, MaxItems
from app.schemas.documents import DocumentId, FilePath
from app.schemas.graph import Name, SourceEntities
from app.schemas.query import (
    HistoryMessage,
    HistoryTurns,
    KeywordList,
    PositiveCount,
    QueryMode,
    QueryText,
    ResponseType,
    UserPrompt,
)

# Fields are the service's own types (app/schemas/query.py, documents.py, entities.py): a value the native API
# refuses is refused here the same way, before anything is translated.
LightragDocStatus = Literal["pending", "processing", "preprocessed", "processed", "failed"]
LightragMode = QueryMode


class _Lenient(BaseModel):
    # LightRAG Server ignores fields it does not know; so do these models (clients send newer fields).
    model_config = ConfigDict(extra="ignore")


# ----- documents -----


class LightragInsertText(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"text": "Alice Chen leads the platform team in Berlin.", "file_source": "onboarding.md"}]
        }
    )

    text: str = Field(min_length=1)
    file_source: FilePath | None = None


class LightragInsertTexts(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "texts": ["Alice Chen leads the platform team.", "Bob Ortiz runs the data team."],
                    "file_sources": ["alice.md", "bob.md"],
                }
            ]
        }
    )

    texts: Annotated[list[str], MaxItems(MAX_DOCUMENTS_ITEMS)] = Field(min_length=1)
    file_sources: Annotated[list[FilePath], MaxItems(MAX_DOCUMENTS_ITEMS)] | None = None


class LightragInsertResponse(BaseModel):
    status: Literal["success", "duplicated", "partial_success", "failure"]
    message: str
    track_id: str


class LightragDocStatusOut(BaseModel):
    id: str
    content_summary: str
    content_length: int
    status: LightragDocStatus
    created_at: str
    updated_at: str
    track_id: str | None = None
    chunks_count: int | None = None
    error_msg: str | None = None
    metadata: dict[str, Any] | None = None
    file_path: str


class LightragDocumentsRequest(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "status_filter": "processed",
                    "page": 1,
                    "page_size": 50,
                    "sort_field": "updated_at",
                    "sort_direction": "desc",
                }
            ]
        }
    )

    status_filter: LightragDocStatus | None = None
    page: StrictInt = Field(1, ge=1, le=1_000_000)
    page_size: StrictInt = Field(50, ge=10, le=200)
    sort_field: Literal["created_at", "updated_at", "id", "file_path"] = "updated_at"
    sort_direction: Literal["asc", "desc"] = "desc"

    @field_validator("status_filter", mode="before")
    @classmethod
    def _lower_status(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value  # the WebUI sends "PROCESSED" too


class LightragPagination(BaseModel):
    page: int
    page_size: int
    total_count: int
    total_pages: int
    has_next: bool
    has_prev: bool


class LightragPaginatedDocs(BaseModel):
    documents: list[LightragDocStatusOut]
    pagination: LightragPagination
    status_counts: dict[str, int]


class LightragStatusCounts(BaseModel):
    status_counts: dict[str, int]


class LightragPipelineStatus(BaseModel):
    autoscanned: bool = False
    busy: bool = False
    job_name: str = "Default Job"
    job_start: str | None = None
    docs: int = 0
    batchs: int = 0
    cur_batch: int = 0
    request_pending: bool = False
    latest_message: str = ""
    history_messages: list[str] | None = None
    update_status: dict[str, Any] | None = None


class LightragTrackStatus(BaseModel):
    track_id: str
    documents: list[LightragDocStatusOut]
    total_count: int
    status_summary: dict[str, int]


class LightragDeleteDocs(_Lenient):
    model_config = ConfigDict(json_schema_extra={"examples": [{"doc_ids": ["doc-0123abcd"], "delete_file": False}]})

    doc_ids: Annotated[list[DocumentId], MaxItems(MAX_IDS)] = Field(min_length=1)
    delete_file: bool = False
    delete_llm_cache: bool = False

    @field_validator("doc_ids")
    @classmethod
    def _unique_ids(cls, value: list[str]) -> list[str]:
        ids = [v.strip() for v in value]
        if any(not v for v in ids):
            raise ValueError("Document ID cannot be empty")
        if len(ids) != len(set(ids)):
            raise ValueError("Document IDs must be unique")
        return ids


class LightragDeleteDocsResponse(BaseModel):
    status: Literal["deletion_started", "busy", "not_allowed"]
    message: str
    doc_id: str


class LightragDeleteEntity(_Lenient):
    model_config = ConfigDict(json_schema_extra={"examples": [{"entity_name": "Alice Chen"}]})

    entity_name: Name


class LightragDeleteRelation(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"source_entity": "Alice Chen", "target_entity": "Platform Team"}]}
    )

    source_entity: Name
    target_entity: Name


class LightragDeletionResult(BaseModel):
    status: Literal["success", "not_found", "fail"]
    doc_id: str
    message: str
    status_code: int = 200
    file_path: str | None = None


# ----- query -----


class LightragHistoryMessage(HistoryMessage):
    model_config = ConfigDict(extra="ignore")  # OpenAI-style clients add `name` and the like


class LightragQueryRequest(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"query": "Who leads the platform team?", "mode": "mix", "include_references": True, "stream": False}
            ]
        }
    )

    query: QueryText
    mode: LightragMode = "mix"
    only_need_context: bool | None = None
    only_need_prompt: bool | None = None
    response_type: ResponseType | None = None
    top_k: PositiveCount | None = None
    chunk_top_k: PositiveCount | None = None
    max_entity_tokens: PositiveCount | None = None
    max_relation_tokens: PositiveCount | None = None
    max_total_tokens: PositiveCount | None = None
    hl_keywords: KeywordList = Field(default_factory=list)
    ll_keywords: KeywordList = Field(default_factory=list)
    conversation_history: Annotated[list[LightragHistoryMessage], MaxItems(MAX_HISTORY_ITEMS)] | None = None
    history_turns: HistoryTurns | None = None
    user_prompt: UserPrompt | None = None
    disable_user_prompt_prefix: bool | None = None  # this service adds no prefix: nothing to disable
    enable_rerank: bool | None = None
    include_references: bool | None = True
    include_chunk_content: bool | None = False
    include_progress: bool | None = False
    stream: bool | None = None

    @field_validator("query")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()  # as LightRAG Server does


class LightragReference(BaseModel):
    reference_id: str
    file_path: str
    content: list[str] | None = None


class LightragQueryResponse(BaseModel):
    response: str
    references: list[LightragReference] | None = None
    llm_generated: bool = True


class LightragQueryData(BaseModel):
    status: Literal["success", "failure"]
    message: str
    data: dict[str, Any]
    metadata: dict[str, Any]


# ----- graph -----


class LightragGraphNode(BaseModel):
    id: str
    labels: list[str]
    properties: dict[str, Any]


class LightragGraphEdge(BaseModel):
    id: str
    type: str | None = "DIRECTED"
    source: str
    target: str
    properties: dict[str, Any]


class LightragKnowledgeGraph(BaseModel):
    nodes: list[LightragGraphNode]
    edges: list[LightragGraphEdge]
    is_truncated: bool = False


class LightragEntityExists(BaseModel):
    exists: bool


class LightragEntityEdit(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "entity_name": "Alice Chen",
                    "updated_data": {"description": "Leads the platform and data teams."},
                    "allow_rename": False,
                    "allow_merge": False,
                }
            ]
        }
    )

    entity_name: Name
    updated_data: dict[str, Any]
    allow_rename: bool = False
    allow_merge: bool = False


class LightragRelationEdit(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"source_id": "Alice Chen", "target_id": "Platform Team", "updated_data": {"weight": 2.0}}]
        }
    )

    source_id: Name
    target_id: Name
    updated_data: dict[str, Any]


class LightragEntityCreate(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "entity_name": "Tesla",
                    "entity_data": {"description": "Electric vehicle maker", "entity_type": "ORGANIZATION"},
                }
            ]
        }
    )

    entity_name: Name
    entity_data: dict[str, Any]


class LightragRelationCreate(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "source_entity": "Elon Musk",
                    "target_entity": "Tesla",
                    "relation_data": {"description": "Elon Musk leads Tesla", "keywords": "CEO", "weight": 1.0},
                }
            ]
        }
    )

    source_entity: Name
    target_entity: Name
    relation_data: dict[str, Any]


class LightragEntitiesMerge(_Lenient):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"entities_to_change": ["Elon Msk", "Ellon Musk"], "entity_to_change_into": "Elon Musk"}]
        }
    )

    entities_to_change: SourceEntities
    entity_to_change_into: Name


class LightragGraphEditResponse(BaseModel):
    status: Literal["success"] = "success"
    message: str
    data: dict[str, Any]
    operation_summary: dict[str, Any] | None = None

"""Responses of DELETE /documents/{id} and POST /documents/delete, and the batch request."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.common import MAX_IDS, MaxItems
from app.schemas.documents import DocumentId


class LLMCalls(BaseModel):
    extract: int  # always 0: the graph is rebuilt from cached extraction answers
    summary: int  # summaries of rebuilt descriptions that crossed the thresholds (cache hits not counted)


class DocumentDeletion(BaseModel):
    document_id: str
    chunks_deleted: int
    entities_deleted: int
    entities_rebuilt: int
    relations_deleted: int
    relations_rebuilt: int
    llm_calls: LLMCalls


class BatchDeleteRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"project_id": "default", "document_ids": ["onboarding-1", "onboarding-2"]}]},
    )

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    document_ids: Annotated[list[DocumentId], MaxItems(MAX_IDS)] = Field(
        min_length=1, description="Deleted together: unknown (404) or processing (409) ones stop the whole batch."
    )


class BatchDeletion(BaseModel):
    document_ids: list[str]
    chunks_deleted: int
    entities_deleted: int
    entities_rebuilt: int = Field(description="Each rebuilt once, however many of the documents touched it.")
    relations_deleted: int
    relations_rebuilt: int
    llm_calls: LLMCalls

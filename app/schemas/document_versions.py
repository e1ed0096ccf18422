"""Request and response models of document updates (PUT /documents/{id}) and their versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.documents import DocumentIn, FilePath, ProgressOut


class DocumentUpdateRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "text": "Alice Chen leads the platform team in Lisbon. She reports to Bob Ortiz.",
                    "file_path": "onboarding.md",
                    "wait": False,
                }
            ]
        },
    )

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    text: str = Field(description="The new text (sanitised as POST /documents sanitises it).")
    file_path: FilePath | None = Field(None, description="Source name; the current one is kept when omitted.")
    metadata: dict[str, Any] | None = Field(None, description="Replaces the metadata; kept when omitted.")
    wait: bool = Field(False, description="Answer once the update is processed, failed or cancelled.")

    @field_validator("metadata")
    @classmethod
    def _metadata_storable(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return DocumentIn._metadata_storable(value)


class DocumentUpdateResult(BaseModel):
    id: str = Field(description="The document (its id never changes).")
    status: Literal["unchanged", "pending", "processing", "processed", "failed", "cancelled"] = Field(
        description="`unchanged`: same text as the current version, nothing done. Otherwise the update's status."
    )
    update_id: str | None = Field(
        None, description="The queued update (follow or cancel it as a document: GET /documents/{update_id})."
    )
    version: int = Field(description="The version the document has (unchanged) or will have (update).")
    error: str | None = None


class DocumentVersionOut(BaseModel):
    version: int
    state: Literal["current", "previous", "pending", "processing", "failed", "cancelled"] = Field(
        description="`current` answers queries; an update not applied yet shows its own status."
    )
    update_id: str | None = Field(None, description="The update that makes (or made) this version, while kept.")
    content_hash: str | None = None
    content_length: int | None = None
    chunks_count: int | None = None
    chunks_reused: int | None = Field(None, description="Chunks kept from the previous version (not extracted).")
    chunks_added: int | None = Field(None, description="Chunks extracted for this version.")
    chunks_removed: int | None = Field(None, description="Chunks of the previous version taken out.")
    updated_at: datetime
    error: str | None = None
    progress: ProgressOut | None = None


class DocumentVersions(BaseModel):
    document_id: str
    version: int = Field(description="The current version.")
    versions: list[DocumentVersionOut] = Field(description="Oldest first; pending updates last.")

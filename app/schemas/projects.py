"""Request/response models for projects."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.common import MAX_ENTITY_TYPES, MaxItems


class ProjectSettings(BaseModel):
    """Per-project overrides of the service-wide settings; omitted fields inherit them."""

    model_config = ConfigDict(extra="forbid")

    entity_types: Annotated[list[str], MaxItems(MAX_ENTITY_TYPES)] | None = Field(None, min_length=1)
    language: str | None = Field(None, min_length=1, max_length=64)
    chunk_size: StrictInt | None = Field(None, ge=16, le=100_000)
    chunk_overlap_size: StrictInt | None = Field(None, ge=0, le=100_000)
    chunk_split_by_character: str | None = Field(None, min_length=1, max_length=32)
    chunk_split_by_character_only: bool | None = None
    max_gleaning: StrictInt | None = Field(None, ge=0, le=5)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ProjectSettings:
        if (
            self.chunk_size is not None
            and self.chunk_overlap_size is not None
            and self.chunk_overlap_size >= self.chunk_size
        ):
            raise ValueError("chunk_overlap_size must be smaller than chunk_size")
        if self.entity_types is not None:
            cleaned = [t.strip() for t in self.entity_types if t.strip()]
            if not cleaned or any(len(t) > 64 for t in cleaned):
                raise ValueError("entity_types must be non-empty names of at most 64 characters")
            self.entity_types = cleaned
        return self


class EffectiveSettings(BaseModel):
    entity_types: list[str]
    language: str
    chunk_size: int
    chunk_overlap_size: int
    chunk_split_by_character: str | None
    chunk_split_by_character_only: bool
    max_gleaning: int


class ProjectCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "id": "acme-handbook",
                    "name": "ACME handbook",
                    "settings": {
                        "entity_types": ["person", "team", "product"],
                        "language": "English",
                        "chunk_size": 1200,
                    },
                }
            ]
        },
    )

    id: str = Field(pattern=PROJECT_ID_PATTERN)
    name: str | None = Field(None, max_length=200)
    settings: ProjectSettings | None = None

    @property
    def project_id(self) -> str:
        """The project this request acts on (what the API-key scope is checked against)."""
        return self.id


class ProjectUpdate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "ACME handbook (2025)",
                    "settings": {"max_gleaning": 0},
                }
            ]
        },
    )

    name: str | None = Field(None, max_length=200)
    settings: ProjectSettings | None = None


class ProjectCounts(BaseModel):
    documents: int
    chunks: int
    entities: int
    relations: int


class ProjectOut(BaseModel):
    id: str
    name: str
    settings: ProjectSettings
    effective_settings: EffectiveSettings
    counts: ProjectCounts
    created_at: datetime
    updated_at: datetime


class ProjectList(BaseModel):
    projects: list[ProjectOut]


class CacheCleared(BaseModel):
    project_id: str
    kind: str
    deleted: int = Field(description="Cached answers removed.")

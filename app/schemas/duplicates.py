"""Request/response models for reviewing possible duplicate entities."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.graph import MergeReport, Name, ProjectField
from app.schemas.merges import MergeEntry


class DuplicatePair(BaseModel):
    entity_a: str
    entity_b: str
    entity_type_a: str
    entity_type_b: str
    score: float = Field(description="0..1: the stored resolution score, or the embedding cosine similarity")
    found_by: list[Literal["resolution", "similarity"]] = Field(
        description="`resolution`: a match found at ingest time and not applied (ENTITY_RESOLUTION=suggest, "
        "or not certain enough); `similarity`: computed now from the entity embeddings"
    )
    name_similarity: float = Field(description="0..1, how alike the two names are as text")
    shared_neighbours: list[str] = Field(description="Entities related to both (at most 10)")
    evidence: list[str] = Field(description="Why the pair is listed, one reason per line")


class DuplicateList(BaseModel):
    pairs: list[DuplicatePair]
    total: int = Field(description="Pairs found (at most the candidate cap), before limit/offset")
    limit: int
    offset: int
    threshold: float = Field(description="Similarity floor used for the `similarity` candidates")


class DuplicateReject(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"project_id": "default", "entity_a": "Draqua Energy", "entity_b": "Draqua Energies Group"}]
        },
    )

    project_id: str = ProjectField
    entity_a: Name
    entity_b: Name


class DuplicateRejected(BaseModel):
    entity_a: str
    entity_b: str
    rejected: bool = True


class DuplicateAccept(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"project_id": "default", "entity": "Mira Tolven", "duplicate": "Dr. Mira Tolven"}]
        },
    )

    project_id: str = ProjectField
    entity: Name = Field(description="The entity kept: the duplicate is merged into it")
    duplicate: Name = Field(description="The entity merged in; its name becomes an alias")


class DuplicateAccepted(BaseModel):
    merge: MergeReport
    entry: MergeEntry | None = Field(
        description="The merge's ledger entry (confirmed): `POST /entities/{name}/unmerge` with its id undoes the "
        "merge, rebuilding the duplicate from its extracted text. None when the duplicate had no extracted text "
        "(an entity made by hand), which an undo could not restore"
    )

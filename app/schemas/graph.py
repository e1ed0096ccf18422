"""Request/response models for entities, relations, merge and the graph view."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictFloat, model_validator

from app.domain.names import NAME_MAX_BYTES
from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.common import MAX_IDS, MAX_KEYWORDS, MaxItems

ProjectField = Field("default", pattern=PROJECT_ID_PATTERN, description="Project id; `default` when omitted.")


def _fits_in_bytes(name: str) -> str:
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > NAME_MAX_BYTES:
        raise ValueError(
            f"a name may take at most {NAME_MAX_BYTES} bytes of UTF-8 (about {NAME_MAX_BYTES // 3} "
            f"Chinese characters); this one takes {size}"
        )
    return name


# A name an entity or relation is written under: its key is indexed (in pairs, for relations), so it is
# limited in bytes as well as in characters.
Name = Annotated[
    str,
    Field(
        min_length=1, max_length=1000, description=f"At most 1,000 characters and {NAME_MAX_BYTES:,} bytes of UTF-8."
    ),
    AfterValidator(_fits_in_bytes),
]
Keywords = str | Annotated[list[str], MaxItems(MAX_KEYWORDS)]
SourceEntities = Annotated[list[str], MaxItems(MAX_IDS), Field(min_length=1)]
MergeStrategy = Literal["concatenate", "keep_first", "keep_longest", "llm_summarize"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----- entities -----


class EntityOut(BaseModel):
    name: str
    entity_type: str
    aliases: list[str] = Field(
        default_factory=list,
        description="Other names of this entity: lookups, curation and later documents using them reach this entity",
    )
    description: str
    degree: int
    file_paths: list[str]
    curated: bool = Field(
        description="Some field written or edited by hand (description or type): a document deletion rebuilds "
        "the entity from its remaining chunks and keeps those fields"
    )
    created_at: datetime
    updated_at: datetime


class EntityList(BaseModel):
    entities: list[EntityOut]
    total: int
    limit: int
    offset: int


class SourceChunk(BaseModel):
    chunk_id: str
    document_id: str
    file_path: str | None


class RelationOut(BaseModel):
    source: str
    target: str
    keywords: str
    description: str
    weight: float
    file_paths: list[str]
    curated: bool = Field(
        description="Some field written or edited by hand (description, keywords or weight): a document deletion "
        "rebuilds the relation from its remaining chunks and keeps those fields"
    )
    created_at: datetime
    updated_at: datetime


class RelationDetail(RelationOut):
    source_chunks: list[SourceChunk] = Field(description="The chunks the relation was extracted from")


class EntityDetail(EntityOut):
    source_ids: list[str]
    source_chunks: list[SourceChunk]
    relations: list[RelationOut]
    relations_total: int


class EntityCreate(_Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "name": "Alice Chen",
                    "entity_type": "person",
                    "description": "Alice Chen leads the platform team in Berlin.",
                }
            ]
        }
    )

    project_id: str = ProjectField
    name: Name
    description: str = Field(min_length=1, max_length=200_000)
    entity_type: str | None = Field(None, max_length=200, description="Defaults to `unknown`.")


class EntityUpdate(_Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "description": "Alice Chen leads the platform and data teams in Berlin.",
                }
            ]
        }
    )

    project_id: str = ProjectField
    new_name: Annotated[
        Name | None, Field(description="Rename; every relation follows. An existing other entity → 409.")
    ] = None
    description: str | None = Field(None, min_length=1, max_length=200_000)
    entity_type: str | None = Field(None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _something_to_change(self) -> EntityUpdate:
        if self.new_name is None and self.description is None and self.entity_type is None:
            raise ValueError("give at least one of new_name, description, entity_type")
        return self


class AliasAdd(_Body):
    model_config = ConfigDict(json_schema_extra={"examples": [{"project_id": "default", "alias": "A. Chen"}]})

    project_id: str = ProjectField
    alias: Annotated[Name, Field(description="Another name of the entity")]


class AliasDetach(_Body):
    model_config = ConfigDict(json_schema_extra={"examples": [{"project_id": "default", "alias": "A. Chen"}]})

    project_id: str = ProjectField
    alias: str = Field(
        min_length=1,
        max_length=1000,
        description="The alias to detach: later documents using it make (or keep) a node of their own",
    )


class EntityDeleted(BaseModel):
    name: str
    relations_deleted: int


# ----- relations -----


class RelationList(BaseModel):
    relations: list[RelationOut]
    total: int
    limit: int
    offset: int


class RelationCreate(_Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "source": "Alice Chen",
                    "target": "Platform Team",
                    "description": "Alice Chen leads the platform team.",
                    "keywords": ["leadership"],
                    "weight": 1.0,
                }
            ]
        }
    )

    project_id: str = ProjectField
    source: Name
    target: Name
    description: str = Field(min_length=1, max_length=200_000)
    keywords: Keywords = Field("", description="Comma-separated string or list of strings.")
    weight: StrictFloat = Field(1.0, gt=0, le=1_000_000)


class RelationUpdate(_Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "source": "Alice Chen",
                    "target": "Platform Team",
                    "weight": 2.0,
                }
            ]
        }
    )

    project_id: str = ProjectField
    source: Name
    target: Name
    description: str | None = Field(None, min_length=1, max_length=200_000)
    keywords: Keywords | None = None
    weight: StrictFloat | None = Field(None, gt=0, le=1_000_000)

    @model_validator(mode="after")
    def _something_to_change(self) -> RelationUpdate:
        if self.description is None and self.keywords is None and self.weight is None:
            raise ValueError("give at least one of description, keywords, weight")
        return self


class RelationDeleted(BaseModel):
    source: str
    target: str


# ----- merge -----


class TargetEntityData(_Body):
    description: str | None = Field(None, min_length=1, max_length=200_000)
    entity_type: str | None = Field(None, min_length=1, max_length=200)


class MergeRequest(_Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "source_entities": ["A. Chen", "Alice"],
                    "target_entity": "Alice Chen",
                    "strategy": "concatenate",
                    "target_entity_data": {"entity_type": "person"},
                }
            ]
        }
    )

    project_id: str = ProjectField
    source_entities: SourceEntities
    target_entity: Name
    strategy: MergeStrategy = "concatenate"
    target_entity_data: TargetEntityData | None = None


class MergeReport(BaseModel):
    target: str
    merged_sources: list[str]
    relations_redirected: int
    relations_merged: int
    self_loops_dropped: int


# ----- graph view -----


class GraphNode(BaseModel):
    id: str
    entity_type: str
    description: str
    degree: int


class GraphEdge(BaseModel):
    source: str
    target: str
    weight: float
    keywords: str
    description: str


class GraphOut(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    is_truncated: bool

"""Typed rows between the repositories and the services: what a repository reads from the graph and
chunk tables, and what the services hand back to be written (embedding updates, provenance).

Repositories build them with `from_row`; services read attributes. The rows are frozen: a service that
needs a changed copy uses `dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Self

from app.domain.chunking import Chunk

Pair = tuple[str, str]

# The fields a person may write (`hand_fields`): a deletion rebuild keeps those and recomputes the others.
ENTITY_FIELDS = ("description", "entity_type")
RELATION_FIELDS = ("description", "keywords", "weight")


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class _Row:
    """A row built from a result mapping by column name (a select may leave out fields that have defaults)."""

    __slots__ = ()

    @classmethod
    def from_row(cls, row: Mapping[Any, Any], **extra: Any) -> Self:
        # Mapping[Any, Any]: SQLAlchemy's RowMapping is keyed by column objects as well as names
        return cls(**{name: row[name] for name in _field_names(cls) if name in row}, **extra)


@dataclass(frozen=True, slots=True)
class EntityRow(_Row):
    key: str
    name: str
    entity_type: str
    description: str
    source_ids: list[str]
    file_paths: list[str]
    embedded_hash: str | None
    curated: bool  # some field written by hand: `hand_fields`
    degree: int = 0
    hand_fields: list[str] = field(default_factory=list)  # description, entity_type
    truncate: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    sources: list[str] = field(default_factory=list)  # full provenance (chunk ids) in order, when read


@dataclass(frozen=True, slots=True)
class RelationRow(_Row):
    src_key: str
    tgt_key: str
    src_name: str  # display names of the endpoints
    tgt_name: str
    keywords: str
    description: str
    weight: float
    source_ids: list[str]
    file_paths: list[str]
    embedded_hash: str | None
    curated: bool
    truncate: str = ""
    hand_fields: list[str] = field(default_factory=list)  # description, keywords, weight
    created_at: datetime | None = None
    updated_at: datetime | None = None
    sources: list[str] = field(default_factory=list)

    @property
    def pair(self) -> Pair:
        return (self.src_key, self.tgt_key)


@dataclass(frozen=True, slots=True)
class EntityText:
    """What an entity's embedding is computed from, and the hash of the text embedded last."""

    key: str
    name: str
    description: str
    embedded_hash: str | None

    @classmethod
    def of(cls, row: EntityRow) -> EntityText:
        return cls(row.key, row.name, row.description, row.embedded_hash)


@dataclass(frozen=True, slots=True)
class RelationText:
    """What a relation's embedding is computed from, and the hash of the text embedded last."""

    src_key: str
    tgt_key: str
    src_name: str
    tgt_name: str
    keywords: str
    description: str
    embedded_hash: str | None

    @property
    def pair(self) -> Pair:
        return (self.src_key, self.tgt_key)

    @classmethod
    def of(cls, row: RelationRow) -> RelationText:
        return cls(
            row.src_key, row.tgt_key, row.src_name, row.tgt_name, row.keywords, row.description, row.embedded_hash
        )


@dataclass(frozen=True, slots=True)
class EntityEmbeddingUpdate:
    """A new vector for an entity, with the description it was computed from: the ingestion pipeline
    stores it only while the row still holds that description (compare-and-set)."""

    key: str
    description: str
    vector: list[float]
    text_hash: str  # stored as embedded_hash


@dataclass(frozen=True, slots=True)
class RelationEmbeddingUpdate:
    """A new vector for a relation; the compare-and-set condition is its description and keywords."""

    src_key: str
    tgt_key: str
    description: str
    keywords: str
    vector: list[float]
    text_hash: str

    @property
    def pair(self) -> Pair:
        return (self.src_key, self.tgt_key)


@dataclass(frozen=True, slots=True)
class RelationSource(_Row):
    """One provenance row of a relation: a chunk (of a document) that mentions it, in insertion order."""

    src_key: str
    tgt_key: str
    chunk_id: str
    document_id: str
    seq: int


@dataclass(frozen=True, slots=True)
class ChunkRow(_Row):
    """A chunk as the ingestion pipeline stores it (the embedding and cache links are set separately)."""

    id: str
    order_index: int
    tokens: int
    start_token: int
    end_token: int
    content: str
    file_path: str | None

    @classmethod
    def of(cls, chunk_id: str, piece: Chunk, file_path: str | None) -> ChunkRow:
        """The row of a chunk the chunker cut (domain/chunking.py), stored under `chunk_id`."""
        return cls(
            id=chunk_id,
            order_index=piece.order_index,
            tokens=piece.tokens,
            start_token=piece.start_token,
            end_token=piece.end_token,
            content=piece.content,
            file_path=file_path,
        )


@dataclass(frozen=True, slots=True)
class ChunkCacheRef(_Row):
    """A chunk's cached extraction inputs: the llm_cache keys of its passes, in order, and its file path."""

    id: str
    file_path: str | None
    extraction_cache_keys: list[str]


@dataclass(frozen=True, slots=True)
class NodeRow(_Row):
    """An entity as the graph view shows it."""

    key: str
    name: str
    entity_type: str
    description: str
    degree: int


@dataclass(frozen=True, slots=True)
class EdgeRow(_Row):
    """A relation as the graph view shows it."""

    src_key: str
    tgt_key: str
    weight: float
    keywords: str
    description: str

"""What retrieval hands to context building: entities, relations and chunks found for a query."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EntityHit:
    key: str
    name: str
    entity_type: str
    description: str
    degree: int
    file_paths: list[str]
    chunk_ids: list[str] = field(default_factory=list)


@dataclass
class RelationHit:
    src_key: str
    tgt_key: str
    src_name: str
    tgt_name: str
    keywords: str
    description: str
    weight: float
    file_paths: list[str]
    chunk_ids: list[str] = field(default_factory=list)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.src_key, self.tgt_key)


@dataclass
class ChunkHit:
    id: str
    document_id: str
    content: str
    file_path: str | None
    source: str  # "vector" | "entity" | "relation"
    rerank_score: float | None = None


@dataclass
class GraphHits:
    """Ranked entities and relations of one search side. The first `lead_entities` / `lead_relations` items
    answer the question directly (named entities, their edges and connecting paths; relations of the asked
    themes): merging sides keeps them ahead of the other side's weaker items."""

    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    lead_entities: int = 0
    lead_relations: int = 0
    chunk_ids: list[str] = field(default_factory=list)  # the side's chunks, best first (QUERY_GRAPH_RANK)

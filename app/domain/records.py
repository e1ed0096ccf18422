"""What one extraction pass yields for one chunk, after parsing and normalisation."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EntityRecord:
    name: str            # normalised display name
    key: str             # entity_key(name): identity within the project
    entity_type: str     # normalised type ("unknown" when unusable)
    description: str
    chunk_id: str = ""
    file_path: str | None = None


@dataclass
class RelationRecord:
    src_name: str
    tgt_name: str
    src_key: str         # src_key < tgt_key always (undirected, stored sorted)
    tgt_key: str
    keywords: list[str]
    description: str
    weight: float = 1.0
    chunk_id: str = ""
    file_path: str | None = None


@dataclass
class ChunkExtraction:
    """Everything extracted from one chunk (first pass merged with gleaning)."""

    chunk_id: str
    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    malformed: int = 0   # records skipped as unparseable

"""Pure merge rules for entities and relations, shared by ingestion and rebuild.

Given the stored row (or None), the new extraction records in chunk order and the full ordered
provenance, compute the next state. Everything is deterministic: ordered de-duplication, never sets
(the official implementation's set-based joins make the 200-id cap keep different ids between runs).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.domain.records import EntityRecord, RelationRecord
from app.domain.rows import EntityRow, RelationRow
from app.domain.texts import SEP, fragments, join_fragments

UNKNOWN_TYPE = "UNKNOWN"
UNKNOWN_SOURCE = "unknown_source"
PLACEHOLDER_PREFIX = "...truncated"
NOT_CHUNKS = {"manual_creation", "UNKNOWN", ""}


class MergeSettings(Protocol):
    """The settings the merge rules read. Read-only members, so `Settings` (whose limit method is a Literal)
    satisfies it."""

    @property
    def max_source_ids_per_entity(self) -> int: ...
    @property
    def max_source_ids_per_relation(self) -> int: ...
    @property
    def source_ids_limit_method(self) -> str: ...
    @property
    def max_file_paths(self) -> int: ...


@dataclass
class EntityMerge:
    key: str
    name: str
    entity_type: str
    fragments: list[str]
    source_ids: list[str]  # limited list stored on the row
    all_sources: list[str]  # full ordered provenance (existing first)
    file_paths: list[str]
    truncate: str
    skipped: bool = False  # KEEP rule: the row stays as it is (provenance is still recorded)
    new_sources: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return join_fragments(self.fragments)

    def row(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "entity_type": self.entity_type,
            "description": self.description,
            "source_ids": self.source_ids,
            "file_paths": self.file_paths,
            "truncate": self.truncate,
        }


@dataclass
class RelationMerge:
    src_key: str
    tgt_key: str
    src_name: str
    tgt_name: str
    keywords: str
    fragments: list[str]
    weight: float
    source_ids: list[str]
    all_sources: list[str]
    file_paths: list[str]
    truncate: str
    skipped: bool = False
    new_sources: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return join_fragments(self.fragments)

    def row(self) -> dict[str, Any]:
        return {
            "src_key": self.src_key,
            "tgt_key": self.tgt_key,
            "keywords": self.keywords,
            "description": self.description,
            "weight": self.weight,
            "source_ids": self.source_ids,
            "file_paths": self.file_paths,
            "truncate": self.truncate,
        }


def ordered_unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def limit_method(settings: MergeSettings) -> str:
    """KEEP or FIFO (unknown values mean KEEP, as officially)."""
    return "FIFO" if str(settings.source_ids_limit_method).upper() == "FIFO" else "KEEP"


def limit_sources(sources: list[str], limit: int, method: str) -> list[str]:
    if len(sources) <= limit:
        return list(sources)
    return sources[:limit] if method == "KEEP" else sources[-limit:]


def truncate_note(total: int, kept: int, method: str) -> str:
    if kept >= total:
        return ""
    return "KEEP Old" if method == "KEEP" else f"FIFO {kept}/{total}"


def merge_file_paths(existing: Sequence[str], new: Iterable[str | None], limit: int, method: str) -> list[str]:
    paths = ordered_unique(
        [p for p in existing if p and not p.startswith(PLACEHOLDER_PREFIX)] + [p or UNKNOWN_SOURCE for p in new]
    )
    if len(paths) <= limit:
        return paths
    kept = paths[:limit] if method == "KEEP" else paths[-limit:]
    return kept + [f"{PLACEHOLDER_PREFIX}...({'KEEP Old' if method == 'KEEP' else 'FIFO'})"]


def combine_fragments(existing_description: str, new_descriptions: Iterable[str]) -> list[str]:
    """Existing fragments first, then new ones not already present (exact match after trimming)."""
    old = [f.strip() for f in fragments(existing_description)]
    new = [d.strip().replace(SEP, " ") for d in new_descriptions if d and d.strip()]
    return ordered_unique(old + new)


def _vote_type(record_types: list[str], existing_type: str | None) -> str:
    """Most frequent type; ties go to the value seen first (new records first, then the stored one)."""
    candidates = [t for t in record_types if t] + ([existing_type] if existing_type else [])
    if not candidates:
        return UNKNOWN_TYPE
    counts = Counter(candidates)
    best = max(counts.values())
    return next(t for t in candidates if counts[t] == best)


def _keep_filter(records: list, limited: list[str], existing_sources: list[str], method: str) -> list:
    if method != "KEEP":
        return records
    allowed = set(limited) | set(existing_sources)
    return [r for r in records if r.chunk_id in allowed]


def merge_entity(
    existing: EntityRow | None,
    records: list[EntityRecord],
    existing_sources: list[str],
    settings: MergeSettings,
    *,
    extra_sources: Sequence[str] = (),
) -> EntityMerge:
    """Merge `records` (chunk order) into `existing` (the stored entity, or None).

    `existing_sources` is the full ordered provenance of the entity; `extra_sources` are chunk ids that
    mention the entity only as a relation endpoint (they count as provenance but bring no description).
    """
    method = limit_method(settings)
    limit = settings.max_source_ids_per_entity
    existing_sources = [s for s in existing_sources if s not in NOT_CHUNKS]
    incoming = ordered_unique([r.chunk_id for r in records if r.chunk_id] + list(extra_sources))
    all_sources = ordered_unique(existing_sources + incoming)
    known = set(existing_sources)  # built once: hub entities have hundreds of sources
    new_sources = [s for s in all_sources if s not in known]
    limited = limit_sources(all_sources, limit, method)
    kept = _keep_filter(records, limited, existing_sources, method)

    name = (existing.name if existing else "") or (records[0].name if records else "")
    key = (existing.key if existing else "") or (records[0].key if records else "")
    if existing is not None and len(existing_sources) >= limit and method == "KEEP" and not kept:
        return EntityMerge(
            key=key,
            name=name,
            entity_type=existing.entity_type or UNKNOWN_TYPE,
            fragments=fragments(existing.description or ""),
            source_ids=list(existing.source_ids or limited),
            all_sources=all_sources,
            file_paths=list(existing.file_paths or []),
            truncate=existing.truncate or "",
            skipped=True,
            new_sources=new_sources,
        )

    existing_type = None
    if existing is not None:
        existing_type = (existing.entity_type or UNKNOWN_TYPE).split(",")[0].strip() or UNKNOWN_TYPE
    entity_type = _vote_type([r.entity_type for r in kept], existing_type)
    frags = combine_fragments((existing.description if existing else "") or "", (r.description for r in kept))
    if not frags:
        frags = [f"Entity {name}"]
    paths = merge_file_paths(
        (existing.file_paths if existing else None) or [], (r.file_path for r in kept), settings.max_file_paths, method
    )
    return EntityMerge(
        key=key,
        name=name,
        entity_type=entity_type,
        fragments=frags,
        source_ids=limited,
        all_sources=all_sources,
        file_paths=paths,
        truncate=truncate_note(len(all_sources), len(limited), method),
        new_sources=new_sources,
    )


def _keyword_tokens(value: str | Iterable[str]) -> list[str]:
    parts = value.replace("\uff0c", ",").split(",") if isinstance(value, str) else list(value)
    return [p.strip() for p in parts if p and p.strip()]


def merge_relation(
    existing: RelationRow | None,
    records: list[RelationRecord],
    existing_sources: list[str],
    settings: MergeSettings,
) -> RelationMerge:
    """Merge `records` (chunk order) into `existing` (the stored relation, or None).

    The display names of the endpoints are `existing`'s when it has them, else the first record's.
    """
    method = limit_method(settings)
    limit = settings.max_source_ids_per_relation
    existing_sources = [s for s in existing_sources if s not in NOT_CHUNKS]
    all_sources = ordered_unique(existing_sources + [r.chunk_id for r in records if r.chunk_id])
    already = set(existing_sources)
    new_sources = [s for s in all_sources if s not in already]
    limited = limit_sources(all_sources, limit, method)
    kept = _keep_filter(records, limited, existing_sources, method)

    stored_weight = existing.weight if existing else None
    existing_weight = 1.0 if stored_weight is None else float(stored_weight)
    stored_keywords = (existing.keywords if existing else "") or ""
    stored_description = (existing.description if existing else "") or ""
    stored_paths = (existing.file_paths if existing else None) or []
    first = records[0] if records else None
    src_key = (existing.src_key if existing else "") or (first.src_key if first else "")
    tgt_key = (existing.tgt_key if existing else "") or (first.tgt_key if first else "")
    src_name = (existing.src_name if existing else "") or (first.src_name if first else src_key)
    tgt_name = (existing.tgt_name if existing else "") or (first.tgt_name if first else tgt_key)
    if existing is not None and len(existing_sources) >= limit and method == "KEEP" and not kept:
        return RelationMerge(
            src_key=src_key,
            tgt_key=tgt_key,
            src_name=src_name,
            tgt_name=tgt_name,
            keywords=stored_keywords,
            fragments=fragments(stored_description),
            weight=existing_weight,
            source_ids=list(existing.source_ids or limited),
            all_sources=all_sources,
            file_paths=list(stored_paths),
            truncate=existing.truncate or "",
            skipped=True,
            new_sources=new_sources,
        )

    weight = 0.0
    if existing is not None:
        weight = existing_weight
    weight += sum(r.weight for r in kept if r.chunk_id not in already)
    weight = max(weight, float(len(limited)))
    keywords = ",".join(
        sorted(set(_keyword_tokens(stored_keywords) + [k for r in kept for k in _keyword_tokens(r.keywords)]))
    )
    frags = combine_fragments(stored_description, (r.description for r in kept))
    if not frags:
        frags = [f"Relation between {src_name} and {tgt_name}"]
    paths = merge_file_paths(stored_paths, (r.file_path for r in kept), settings.max_file_paths, method)
    return RelationMerge(
        src_key=src_key,
        tgt_key=tgt_key,
        src_name=src_name,
        tgt_name=tgt_name,
        keywords=keywords,
        fragments=frags,
        weight=weight,
        source_ids=limited,
        all_sources=all_sources,
        file_paths=paths,
        truncate=truncate_note(len(all_sources), len(limited), method),
        new_sources=new_sources,
    )


def endpoint_records(relations: Sequence[RelationRecord], missing_keys: set[str]) -> dict[str, list[EntityRecord]]:
    """Entities to create for relation endpoints never extracted as entities (type UNKNOWN,
    description taken from the relation), in relation order."""
    out: dict[str, list[EntityRecord]] = {}
    for rel in relations:
        for key, name in ((rel.src_key, rel.src_name), (rel.tgt_key, rel.tgt_name)):
            if key in missing_keys:
                out.setdefault(key, []).append(
                    EntityRecord(
                        name=name,
                        key=key,
                        entity_type=UNKNOWN_TYPE,
                        description=rel.description,
                        chunk_id=rel.chunk_id,
                        file_path=rel.file_path,
                    )
                )
    return out

"""Rebuild entities and relations from the cached extraction results of their remaining chunks, with the
same pure merge rules ingestion uses, so a rebuilt item looks as if the deleted document had never been
ingested. No I/O here: the caller loads rows, provenance and parsed cache entries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from app.core.config import Settings
from app.domain.merge_rules import (
    EntityMerge,
    RelationMerge,
    endpoint_records,
    limit_method,
    limit_sources,
    merge_entity,
    merge_relation,
    truncate_note,
)
from app.domain.records import ChunkExtraction
from app.domain.rows import EntityRow, Pair, RelationRow
from app.domain.texts import fragments, join_fragments


def remaining_sources(sources: Iterable[str], gone: set[str]) -> list[str]:
    return [s for s in sources if s not in gone]


@dataclass
class RebuildPlan:
    delete_entities: list[str] = field(default_factory=list)
    delete_relations: list[Pair] = field(default_factory=list)
    entities: list[EntityMerge] = field(default_factory=list)
    relations: list[RelationMerge] = field(default_factory=list)
    # Items keeping their text while their provenance shrinks: a description written by hand (a rebuild from
    # the cache would discard it), or no parseable cached record explains them.
    stale_entities: dict[str, list[str]] = field(default_factory=dict)
    stale_relations: dict[Pair, list[str]] = field(default_factory=dict)
    # A kept description without the fragments only the deleted chunks' records gave (appended by ingestion to
    # a description written by hand), when it held some.
    kept_entity_texts: dict[str, str] = field(default_factory=dict)
    kept_relation_texts: dict[Pair, str] = field(default_factory=dict)


def chunks_needed(
    ents: dict[str, EntityRow], rels: dict[Pair, RelationRow], gone: set[str], settings: Settings
) -> list[str]:
    """Chunks whose cached extractions the rebuild reads: the source-id-limited remaining lists, and for a
    description written by hand every chunk of it (what the deleted ones said is taken out of it)."""
    method = limit_method(settings)
    needed: dict[str, None] = {}
    for ent in ents.values():
        for chunk in limit_sources(remaining_sources(ent.sources, gone), settings.max_source_ids_per_entity, method):
            needed.setdefault(chunk, None)
    for rel in rels.values():
        for chunk in limit_sources(remaining_sources(rel.sources, gone), settings.max_source_ids_per_relation, method):
            needed.setdefault(chunk, None)
    items: list[EntityRow | RelationRow] = [*ents.values(), *rels.values()]
    for item in items:
        if "description" in item.hand_fields:
            needed.update(dict.fromkeys(item.sources))
    return list(needed)


def without_gone_text(description: str, said: dict[str, set[str]], sources: list[str], gone: set[str]) -> str | None:
    """`description` without the fragments that only the deleted chunks' records said (`said`: chunk id → the
    descriptions its records give the item), or None when it holds none: text a person wrote stays, and so does
    a fragment a remaining chunk says too. A summary that rewrote the fragments is kept as it is."""
    only_gone = set().union(*(said.get(c, set()) for c in sources if c in gone)) - set().union(
        *(said.get(c, set()) for c in sources if c not in gone)
    )
    parts = fragments(description)
    kept = [f for f in parts if f.strip() not in only_gone]
    return join_fragments(kept) if len(kept) < len(parts) else None


def _read(row: EntityRow | RelationRow, extractions: dict[str, ChunkExtraction]) -> list[tuple[str, ChunkExtraction]]:
    """The records read of the item's own chunks."""
    return [(c, extractions[c]) for c in row.sources if c in extractions]


def rebuild_entity(
    row: EntityRow, remaining: list[str], extractions: dict[str, ChunkExtraction], settings: Settings
) -> EntityMerge | None:
    method = limit_method(settings)
    key = row.key
    limited = limit_sources(remaining, settings.max_source_ids_per_entity, method)
    found = [extractions[c] for c in limited if c in extractions]
    records = [e for x in found for e in x.entities if e.key == key]
    if not records:  # only ever seen as a relation endpoint: described by its relations, as at ingestion
        touching = [r for x in found for r in x.relations if key in (r.src_key, r.tgt_key)]
        records = endpoint_records(touching, {key}).get(key, [])
    if not records:
        return None
    merged = merge_entity(None, records, [], settings)
    merged.key, merged.name = key, row.name
    merged.source_ids, merged.all_sources = limited, remaining
    merged.truncate = truncate_note(len(remaining), len(limited), method)
    return merged


def rebuild_relation(
    row: RelationRow, remaining: list[str], extractions: dict[str, ChunkExtraction], settings: Settings
) -> RelationMerge | None:
    method = limit_method(settings)
    pair = row.pair
    limited = limit_sources(remaining, settings.max_source_ids_per_relation, method)
    records = [
        r for c in limited if c in extractions for r in extractions[c].relations if (r.src_key, r.tgt_key) == pair
    ]
    if not records:
        return None
    merged = merge_relation(None, records, [], settings)
    merged.src_key, merged.tgt_key = pair
    merged.src_name, merged.tgt_name = row.src_name, row.tgt_name
    merged.source_ids, merged.all_sources = limited, remaining
    merged.weight = max(sum(r.weight for r in records), float(len(limited)))
    merged.truncate = truncate_note(len(remaining), len(limited), method)
    return merged


def plan_rebuild(
    ents: dict[str, EntityRow],
    rels: dict[Pair, RelationRow],
    gone: set[str],
    extractions: dict[str, ChunkExtraction],
    settings: Settings,
) -> RebuildPlan:
    """Decide, per affected item, delete (no provenance left) or rebuild (from the remaining chunks)."""
    plan = RebuildPlan()
    for key in sorted(ents):
        remaining = remaining_sources(ents[key].sources, gone)
        if not remaining:
            plan.delete_entities.append(key)
        elif "description" in ents[key].hand_fields:
            plan.stale_entities[key] = remaining
            row = ents[key]
            said = {c: {e.description.strip() for e in x.entities if e.key == key} for c, x in _read(row, extractions)}
            if (text := without_gone_text(row.description, said, row.sources, gone)) is not None:
                plan.kept_entity_texts[key] = text
        elif (merged := rebuild_entity(ents[key], remaining, extractions, settings)) is not None:
            if "entity_type" in ents[key].hand_fields:  # set by hand: the records' type does not replace it
                merged.entity_type = ents[key].entity_type
            plan.entities.append(merged)
        else:
            plan.stale_entities[key] = remaining
    dropped = set(plan.delete_entities)
    for pair in sorted(rels):
        remaining = remaining_sources(rels[pair].sources, gone)
        if not remaining or pair[0] in dropped or pair[1] in dropped:
            plan.delete_relations.append(pair)
        elif "description" in rels[pair].hand_fields:
            plan.stale_relations[pair] = remaining
            rel = rels[pair]
            said = {
                c: {r.description.strip() for r in x.relations if (r.src_key, r.tgt_key) == pair}
                for c, x in _read(rel, extractions)
            }
            if (text := without_gone_text(rel.description, said, rel.sources, gone)) is not None:
                plan.kept_relation_texts[pair] = text
        elif (rebuilt := rebuild_relation(rels[pair], remaining, extractions, settings)) is not None:
            if "keywords" in rels[pair].hand_fields:
                rebuilt.keywords = rels[pair].keywords
            if "weight" in rels[pair].hand_fields:
                rebuilt.weight = rels[pair].weight
            plan.relations.append(rebuilt)
        else:
            plan.stale_relations[pair] = remaining
    return plan

"""Which chunks go back to the names an automatic merge absorbed: the split of an entity's provenance, and of
its relations', read from the chunks' extraction records (no I/O, no LLM).

A chunk whose records name an absorbed name goes to that name's restored node; it stays with the entity only
if its records name the entity too, or name none of them (a chunk without readable records keeps its place:
nothing says it belonged elsewhere). Relations follow the same rule per chunk: the entity's relation to X
keeps a chunk whose records relate the entity to X, and the restored name's relation to X (or to the entity
itself: a merge drops such self-loops) gets the chunks whose records relate that name to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.domain.names import sorted_pair
from app.domain.records import ChunkExtraction

Pair = tuple[str, str]


@dataclass
class Split:
    kept: list[str]  # the entity's chunks after the split, in their order
    restored: dict[str, list[str]]  # absorbed key → its chunks, in order
    names: dict[str, str]  # absorbed key → the display name its records use
    types: dict[str, str]  # absorbed key → the first type its records give
    kept_relations: dict[Pair, list[str]] = field(default_factory=dict)  # every relation of the entity, shrunk
    new_relations: dict[Pair, list[str]] = field(default_factory=dict)  # relations of the restored names

    @property
    def moved(self) -> bool:
        return any(self.restored.values())


def _named(x: ChunkExtraction) -> set[str]:
    return {e.key for e in x.entities} | {k for r in x.relations for k in (r.src_key, r.tgt_key)}


def split_provenance(
    key: str,
    absorbed: set[str],
    sources: list[str],
    relation_sources: dict[Pair, list[str]],
    extractions: dict[str, ChunkExtraction],
) -> Split:
    """Split `key`'s provenance (its `sources` and its relations' `relation_sources`) between it and the
    `absorbed` keys, by the records of each chunk in `extractions`."""
    split = Split(kept=[], restored={k: [] for k in sorted(absorbed)}, names={}, types={})
    for x in extractions.values():
        for e in x.entities:
            if e.key in absorbed:
                split.names.setdefault(e.key, e.name)
                if e.entity_type != "unknown":
                    split.types.setdefault(e.key, e.entity_type)
        for r in x.relations:
            for k, name in ((r.src_key, r.src_name), (r.tgt_key, r.tgt_name)):
                if k in absorbed:
                    split.names.setdefault(k, name)
    for chunk in sources:
        found = extractions.get(chunk)
        named = _named(found) if found is not None else set()
        theirs = sorted(named & absorbed)
        for k in theirs:
            split.restored[k].append(chunk)
        if key in named or not theirs:
            split.kept.append(chunk)
    ends = {key, *absorbed}
    for pair, chunks in relation_sources.items():
        far = pair[1] if pair[0] == key else pair[0]
        kept: list[str] = []
        for chunk in chunks:
            found = extractions.get(chunk)
            pairs = {(r.src_key, r.tgt_key) for r in found.relations} if found is not None else set()
            moving = sorted(q for q in (sorted_pair(k, far) for k in absorbed if k != far) if q in pairs)
            for q in moving:
                split.new_relations.setdefault(q, []).append(chunk)
            if pair in pairs or not moving:
                kept.append(chunk)
        split.kept_relations[pair] = kept
    # relations between the entity and a restored name were self-loops of the merge: only the records know them
    for chunk in sources:
        found = extractions.get(chunk)
        for r in found.relations if found is not None else []:
            ends_of = {r.src_key, r.tgt_key}
            if len(ends_of) == 2 and ends_of <= ends and ends_of & absorbed:
                listed = split.new_relations.setdefault((r.src_key, r.tgt_key), [])
                if chunk not in listed:
                    listed.append(chunk)
    return split

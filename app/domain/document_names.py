"""The names a document's extractions hold, and the extractions with names mapped to the entities they resolve
to (pure; app/domain/resolution.py decides the mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from app.domain.name_matching import match_key, specific_type
from app.domain.names import sorted_pair
from app.domain.records import ChunkExtraction


@dataclass
class DocumentNames:
    """The document's names in first-seen order: key → display name and type (first known type wins)."""

    names: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    specific: dict[str, set[str]] = field(default_factory=dict)  # key → every specific type it was given
    related: set[tuple[str, str]] = field(default_factory=set)  # (source key, target key) of its relations

    def add(self, key: str, name: str, entity_type: str) -> None:
        self.names.setdefault(key, name)
        if (specific := specific_type(entity_type or "")) is not None:
            self.specific.setdefault(key, set()).add(specific)
        if self.types.get(key, "unknown").lower() in ("", "unknown"):
            self.types[key] = entity_type or "unknown"

    def match(self, key: str) -> str:
        return match_key(self.names[key], self.types.get(key, "unknown"))


def document_names(extractions: list[ChunkExtraction]) -> DocumentNames:
    """The names of a document's extractions (entities, then relation ends), in chunk order."""
    doc = DocumentNames()
    for extraction in extractions:
        for ent in extraction.entities:
            doc.add(ent.key, ent.name, ent.entity_type)
        for rel in extraction.relations:
            doc.add(rel.src_key, rel.src_name, "unknown")
            doc.add(rel.tgt_key, rel.tgt_name, "unknown")
            doc.related.add((rel.src_key, rel.tgt_key))
    return doc


def remap(
    extractions: list[ChunkExtraction], targets: Mapping[str, str], display: Mapping[str, str] | None = None
) -> list[ChunkExtraction]:
    """The extractions with every name's key replaced by the entity it resolves to. A relation whose two
    ends resolve to one entity is dropped: the graph holds no self-loops, so a resolved one would be lost
    text either way, and it says nothing a description does not."""
    display = display or {}
    out = []
    for x in extractions:
        ents = [
            replace(e, key=t, name=display.get(t, e.name)) if (t := targets.get(e.key, e.key)) != e.key else e
            for e in x.entities
        ]
        rels = []
        for r in x.relations:
            src, tgt = targets.get(r.src_key, r.src_key), targets.get(r.tgt_key, r.tgt_key)
            if src == tgt:
                continue
            if (src, tgt) == (r.src_key, r.tgt_key):
                rels.append(r)
                continue
            names = {
                src: display.get(src, r.src_name if src == targets.get(r.src_key, r.src_key) else r.tgt_name),
                tgt: display.get(tgt, r.tgt_name if tgt == targets.get(r.tgt_key, r.tgt_key) else r.src_name),
            }
            a, b = sorted_pair(src, tgt)
            rels.append(replace(r, src_key=a, tgt_key=b, src_name=names[a], tgt_name=names[b]))
        out.append(replace(x, entities=ents, relations=rels))
    return out

"""Metrics of the retrieval-quality benchmark, pure functions over the world and what the service returned.

Which real entity a stored node or a context entity stands for is read from its description: the world
model describes every entity with a tail unique to it ("a chemist born in 1961"), and merges keep the
fragments of every entity folded into a node. A node without any tail falls back to its name, when that
surface form means one entity only.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bench.quality_world import Question, World

KINDS = ("entity", "alias", "thematic", "multihop")


def _fold(name: str) -> str:
    return " ".join(name.casefold().split())


class EntityMatcher:
    def __init__(self, world: World) -> None:
        self.tails = [(e.tail, e.id) for e in world.entities.values()]
        meanings: dict[str, set[str]] = defaultdict(set)
        for doc in world.documents:
            for form, eid in doc.mentions.items():
                meanings[_fold(form)].add(eid)
        for e in world.entities.values():
            meanings[_fold(e.name)].add(e.id)
        self.by_name = {form: next(iter(ids)) for form, ids in meanings.items() if len(ids) == 1}

    def ids(self, name: str, description: str) -> set[str]:
        found = {eid for tail, eid in self.tails if tail in description}
        if not found and _fold(name) in self.by_name:
            found.add(self.by_name[_fold(name)])
        return found


@dataclass
class Score:
    entity_recall: float | None  # None: the mode returns no entities (naive)
    relation_recall: float
    tokens: int


def content_text(context: dict[str, Any]) -> str:
    """The context's content as the answer model reads it: names, types, keywords, descriptions, chunk texts."""
    parts = [f"{e['name']} {e['type']} {e['description']}" for e in context.get("entities", [])]
    parts += [f"{r['source']} {r['target']} {r['keywords']} {r['description']}" for r in context.get("relations", [])]
    parts += [c["content"] for c in context.get("chunks", [])]
    return "\n".join(parts)


def score(
    question: Question,
    context: dict[str, Any],
    renderings: dict[str, set[str]],
    matcher: EntityMatcher,
    count_tokens: Callable[[str], int],
) -> Score:
    text = content_text(context)
    found_relations = sum(1 for rid in question.relations if any(s in text for s in renderings.get(rid, ())))
    relation_recall = found_relations / len(question.relations) if question.relations else 1.0
    entity_recall = None
    if context.get("entities") or context.get("relations"):
        seen: set[str] = set()
        for e in context.get("entities", []):
            seen |= matcher.ids(e["name"], e["description"])
        entity_recall = len(seen & set(question.entities)) / len(question.entities)
    return Score(entity_recall, relation_recall, count_tokens(text))


@dataclass
class Resolution:
    nodes: int
    real_entities: int  # entities written in at least one document
    aliased: int  # of those, written with more than one surface form
    aliased_split: int  # aliased entities held by more than one node
    nodes_per_entity: float
    over_merged: list[tuple[str, str]] = field(default_factory=list)  # pairs of entity ids sharing a node
    unmapped_nodes: int = 0
    missing: int = 0  # entities written in the documents but held by no node

    @property
    def split_share(self) -> float:
        return self.aliased_split / self.aliased if self.aliased else 0.0


def resolution(world: World, nodes: Iterable[tuple[str, str]]) -> Resolution:
    """`nodes`: (name, description) of every stored entity."""
    matcher = EntityMatcher(world)
    held: dict[str, int] = defaultdict(int)
    pairs: set[tuple[str, str]] = set()
    count = unmapped = 0
    for name, description in nodes:
        count += 1
        ids = sorted(matcher.ids(name, description))
        unmapped += not ids
        for eid in ids:
            held[eid] += 1
        pairs |= {(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]}
    forms = world.forms_used()
    present = [eid for eid in world.entities if forms.get(eid)]
    aliased = [eid for eid in present if len({_fold(f) for f in forms[eid]}) > 1]
    counted = [held[eid] for eid in present if held[eid]]
    return Resolution(
        nodes=count,
        real_entities=len(present),
        aliased=len(aliased),
        aliased_split=sum(1 for eid in aliased if held[eid] > 1),
        nodes_per_entity=statistics.mean(counted) if counted else 0.0,
        over_merged=sorted(pairs),
        unmapped_nodes=unmapped,
        missing=sum(1 for eid in present if not held[eid]),
    )


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))] if ordered else 0.0


def mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.mean(kept) if kept else None

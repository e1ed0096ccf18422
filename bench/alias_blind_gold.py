"""The gold of the blind alias world (bench/alias_world_blind.py), duck-typed for
tests/support/fakes/world_model.py: entities with a description tail unique to each, documents with the forms
they write (form -> entity id) and the relations their sentences state."""

from __future__ import annotations

from dataclasses import dataclass, field


class PoolExhausted(ValueError):
    """A seed's draws used up a name pool before its world was built: that seed cannot be built at this size
    (the drivers skip it and say so)."""


@dataclass
class Entity:
    id: str
    name: str
    type: str
    tail: str
    habit: str

    def description(self, form: str) -> str:
        return f"{form} is {self.tail}."


@dataclass
class Told:
    a: str
    b: str
    relation: str
    sentence: str


@dataclass
class Relation:
    a: str
    b: str
    keywords: str


@dataclass
class Document:
    id: str
    text: str
    mentions: dict[str, str]
    told: list[Told]


@dataclass
class Plan:
    name: str
    type: str
    uses: list[list[str]]  # per document, the steps in the order written
    entity: Entity | None = None


@dataclass
class BlindWorld:
    seed: int
    entities: dict[str, Entity]
    documents: list[Document]
    relations: dict[str, Relation]
    negatives: list[tuple[str, str, str]]  # (entity a, entity b, kind) that must stay apart
    questions: list = field(default_factory=list)

    def forms_of(self, eid: str) -> set[str]:
        return {f for d in self.documents for f, e in d.mentions.items() if e == eid}

    def aliased(self) -> dict[str, str]:
        """Entities written with two or more distinct forms -> their habit."""
        return {eid: e.habit for eid, e in self.entities.items() if len(self.forms_of(eid)) > 1}

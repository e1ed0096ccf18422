"""What entity resolution reads and decides (app/domain/resolution.py): what the project holds about a
document's names, the decision on each name, and the document's whole resolution."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.domain.absorption import Absorption
from app.domain.aliases import AliasSource
from app.domain.name_index import Nearby


@dataclass
class Known:
    """What the project holds about the looked-up keys (read under their key locks)."""

    entity_types: dict[str, str] = field(default_factory=dict)  # existing entity key → its type
    aliases: dict[str, str] = field(default_factory=dict)  # alias key or index_key(match) → entity key
    initials: dict[str, list[str]] = field(default_factory=dict)  # acronym → entity keys with those initials
    nearby: Nearby = field(default_factory=dict)  # entities sharing a root or surname with the document's names
    defined: set[str] = field(default_factory=set)  # acronyms the document defines in any form (never by initials)


@dataclass(frozen=True)
class Decision:
    target: str  # key the name's records merge into (the name's own key when none)
    source: AliasSource | None = None
    evidence: str = ""
    scoped: bool = False  # the alias holds only inside this document
    apart: bool = False  # kept apart from an entity of another type holding the name
    rule: str | None = None  # what the ledger names as the rule, when not the alias source ("llm_judge")


@dataclass
class Resolution:
    decisions: dict[str, Decision]  # every name's key → decision (applied ones have target != key)
    suggestions: list[tuple[str, str, float, str]]  # (key, other key, score, evidence), not applied
    index: dict[str, str]  # index_key(match) → entity key, to record for later documents
    display: dict[str, str]  # target key → display name for entities new in this document
    absorptions: list[Absorption] = field(default_factory=list)  # earlier nodes to merge into this document's
    open: dict[str, set[str]] = field(default_factory=dict)  # name key → candidates left to the judge

    def target(self, key: str) -> str:
        return self.decisions[key].target if key in self.decisions else key

"""What entity resolution reads and decides (app/domain/resolution.py): what the project holds about a
document's names, the decision on each name, and the document's whole resolution."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import overload

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
    # earlier nodes to merge into this document's (`Later` from `resolve`: worked out when first read)
    absorptions: Sequence[Absorption] = field(default_factory=list)
    open: dict[str, set[str]] = field(default_factory=dict)  # name key → candidates left to the judge

    def target(self, key: str) -> str:
        return self.decisions[key].target if key in self.decisions else key


class Later(Sequence[Absorption]):
    """A list of absorptions worked out when first read. The ingest reads none of `resolve`'s (its final pass
    finds them again on the committed graph, app/services/ingest/absorb.py), and finding them asks every
    earlier node near the document's names for its one fit: a tenth of the rules' Python per document."""

    def __init__(self, find: Callable[[], list[Absorption]]) -> None:
        self._find: Callable[[], list[Absorption]] | None = find
        self._found: list[Absorption] = []

    def _list(self) -> list[Absorption]:
        if self._find is not None:
            self._found, self._find = self._find(), None
        return self._found

    @overload
    def __getitem__(self, i: int) -> Absorption: ...
    @overload
    def __getitem__(self, i: slice) -> list[Absorption]: ...
    def __getitem__(self, i: int | slice) -> Absorption | list[Absorption]:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._list())

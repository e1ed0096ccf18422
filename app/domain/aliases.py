"""Typed rows of entity resolution: aliases (a surface form's key → the entity it names), suggested
duplicate pairs and rejected pairs.

An alias is project-wide, or scoped to one document: a partial person name ("Tolven") or an acronym whose
definition conflicts with the project's names only at the document where the evidence was read. A scoped
alias is stored under `scoped_key(alias_key, document_id)`; names never contain control characters
(app/domain/names.py drops them), so the separator cannot collide with a real key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from app.domain.names import sorted_pair
from app.domain.rows import _Row

AliasSource = Literal["rule", "acronym", "partial", "similarity", "merge", "manual"]
ALIAS_SOURCES: tuple[str, ...] = ("rule", "acronym", "partial", "similarity", "merge", "manual")
SCOPE_SEPARATOR = "\x1f"


def scoped_key(alias_key: str, document_id: str) -> str:
    return f"{alias_key}{SCOPE_SEPARATOR}{document_id}"


def unscoped(stored_key: str) -> str:
    """The alias key as a name's entity_key, whether the stored key is scoped or not."""
    return stored_key.split(SCOPE_SEPARATOR, 1)[0]


@dataclass(frozen=True, slots=True)
class AliasItem:
    """An alias to record: `alias_key` is entity_key(alias_name); `scoped` keeps it to `document_id`."""

    alias_key: str
    alias_name: str
    source: AliasSource
    document_id: str | None = None
    scoped: bool = False

    @property
    def stored_key(self) -> str:
        if self.scoped and self.document_id:
            return scoped_key(self.alias_key, self.document_id)
        return self.alias_key


@dataclass(frozen=True, slots=True)
class AliasRow(_Row):
    alias_key: str  # as stored (scoped aliases carry their document, see scoped_key)
    entity_key: str
    alias_name: str
    source: str
    document_id: str | None = None
    created_at: datetime | None = None

    @property
    def key(self) -> str:
        return unscoped(self.alias_key)

    @property
    def scoped(self) -> bool:
        return SCOPE_SEPARATOR in self.alias_key


@dataclass(frozen=True, slots=True)
class SuggestionItem:
    """A pair of entity keys that may name one entity; the pair is stored sorted."""

    key_a: str
    key_b: str
    score: float
    evidence: str

    def sorted(self) -> SuggestionItem:
        a, b = sorted_pair(self.key_a, self.key_b)
        return SuggestionItem(a, b, self.score, self.evidence)


@dataclass(frozen=True, slots=True)
class SuggestionRow(_Row):
    key_a: str
    key_b: str
    score: float
    evidence: str
    created_at: datetime | None = None

"""Retroactive absorption (pure): an earlier short node ("Dr. Okafor", "BIS", "Colo.") that exactly one full
name of the project fits once a later document brings that name; the resolver's final pass
(app/services/ingest/absorb.py) merges it and records the alias. And the other way: the standing merges a
document contradicts by relating two names that had become one node (`related_forms`, `contradicted`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from app.domain.cross_document import (
    extension_candidates,
    initialled_candidates,
    initials_key,
    lone_word_candidates,
    term_initials,
)
from app.domain.document_names import document_names
from app.domain.name_designations import dotted_initials
from app.domain.name_index import NameIndex, Nearby
from app.domain.name_matching import (
    acronym_letters,
    is_acronym,
    is_person,
    match_key,
    read_as_initials_alone,
    tokens,
    types_compatible,
)
from app.domain.name_nicknames import nickname_candidates
from app.domain.name_shapes import capitalised_name
from app.domain.names import sorted_pair
from app.domain.records import ChunkExtraction
from app.domain.state_abbreviations import foreign_reading

_WHAT = {"partial": "person", "year": "name with a year", "maker": "product with its maker", "firm": "firm"}


@dataclass(frozen=True)
class Absorption:
    """An earlier node (`key`) that a full name of this document (`target`) shows to be an alias of it."""

    key: str
    name: str
    target: str
    target_name: str
    rule: str  # partial | root | acronym | year | maker
    evidence: str


def absorptions(full: Nearby, nearby: Nearby, skip: set[str], index: NameIndex | None = None) -> list[Absorption]:
    """Earlier short nodes among `nearby` that exactly one full name of the project fits, when that name is one
    of this document's (`full`: target key → (name, type)). `skip`: keys the document itself resolved. `index`:
    a NameIndex of exactly `{**nearby, **full}` when the caller has one (a final pass asks several times)."""
    everyone = {**nearby, **full}
    index = index if index is not None else NameIndex(everyone)
    candidates = [(key, named) for key, named in sorted(nearby.items()) if key not in skip and key not in full]
    found = (lone_fit(key, name, etype, everyone, index) for key, (name, etype) in candidates)
    return [a for a in found if a is not None and absorbs(a, full)]


def lone_fit(key: str, name: str, etype: str, everyone: Nearby, index: NameIndex) -> Absorption | None:
    """The node `key` absorbed into the one name of `everyone` it fits (if one); `absorbs` says whether it may."""
    if is_acronym(name):
        if not read_as_initials_alone(name):  # "BC" of another document
            return None
        letters = acronym_letters(name).lower()  # the node may be "r.f.s.b."
        fits = {
            k
            for k, (n, t) in everyone.items()
            if k != key and initials_fit(key, letters, n, t) and types_compatible(etype, t)
        }
        rule, evidence = "acronym", f"{name} are the initials of {{target}}, the only such name in the project"
    else:
        fits, rule = lone_word_candidates(name, etype, index, exclude=key)
        if not fits:
            fits, rule = initialled_candidates(name, etype, index, exclude=key), "partial"
        if not fits:
            fits, rule = extension_candidates(name, etype, index, exclude=key)
        evidence = f"{name!r} alone, and {{target}} is the only {_WHAT.get(rule, 'name')} it fits"
    fits = {t for t in fits if not foreign_reading(name, t)}  # a state's abbreviation reads as its state or nothing
    if len(fits) != 1:
        return None
    (target,) = fits
    target_name = everyone[target][0]
    return Absorption(key, name, target, target_name, rule, evidence.format(target=repr(target_name)))


def initials_fit(key: str, letters: str, name: str, etype: str) -> bool:
    """Whether the acronym node `key` (its `letters`, lower case) may stand for the name: the initials of a
    capitalised name ("BIS", "N.C." for the place "North Carolina") or of a term ("MRI")."""
    if letters in term_initials(name, etype):
        return True
    return capitalised_name(name) and (initials_key(name, etype) == letters or dotted_initials(name, etype) == key)


def initials_keys(name: str, etype: str) -> set[str]:
    """The keys of the acronym nodes the name's initials may be (the ledger rows to read for `ambiguous_initials`):
    "bis" and "b.i.s." for "Bank for International Settlements", "n.c." and "nc" for the place "North Carolina"."""
    found = set(term_initials(name, etype))
    if (letters := initials_key(name, etype)) is not None:
        found.add(letters)
    if (dotted := dotted_initials(name, etype)) is not None:
        found.add(dotted.replace(".", ""))
    return found | {"".join(f"{c}." for c in f) for f in found}


def absorbs(a: Absorption, full: Nearby) -> bool:
    """Whether the fit `a` is into one of the full names `full`: a one-word name is no full name, unless the short
    node is it cut short ("Colo.")."""
    return a.target in full and (len(tokens(*full[a.target])) >= 2 or a.rule == "designation")


def related_forms(extractions: list[ChunkExtraction]) -> set[tuple[str, str]]:
    """The pairs of names (keys, sorted) a document relates to each other that the match key or a given name's
    short form would read as one person ("Bob Everly" / "Robert Everly"): the document names two people, and the
    resolver keeps the two apart in it (app/domain/resolution.py, `two_people`). Another document naming each
    form alone may have merged them before: that merge is contradicted (`contradicted`)."""
    doc = document_names(extractions)
    out: set[tuple[str, str]] = set()
    for a, b in doc.related:
        (name_a, type_a), (name_b, type_b) = (doc.names[a], doc.types[a]), (doc.names[b], doc.types[b])
        if a == b or not (is_person(type_a) or is_person(type_b)):
            continue
        same_key = match_key(name_a, type_a) == match_key(name_b, type_b)
        if same_key or nickname_candidates(name_a, type_a, {b: (name_b, type_b)}, [b], exclude=a):
            out.add(sorted_pair(a, b))
    return out


class StandingMerge(Protocol):
    """A standing automatic merge of the name `merged_key` into the entity `entity_key` (a ledger entry)."""

    @property
    def id(self) -> int: ...
    @property
    def entity_key(self) -> str: ...
    @property
    def merged_key(self) -> str: ...


M = TypeVar("M", bound=StandingMerge)


def contradicted(related: Collection[tuple[str, str]], merges: Sequence[M]) -> list[M]:
    """Among `merges` (the standing merges of the names of `related`), one per merged name and entity that
    joins the two names of a related pair into one entity: "Robert Everly" merged into "Bob Everly" (or both
    into a third writing) while the document relates the two. Undone, the names are two nodes, as they are
    in the order where the relating document came first."""
    into: dict[str, set[str]] = {}
    for m in merges:
        into.setdefault(m.merged_key, set()).add(m.entity_key)
    out: dict[tuple[str, str], M] = {}
    for a, b in sorted(related):
        joined = into.get(a, {a}) & into.get(b, {b})
        for m in merges:
            if m.merged_key in (a, b) and m.entity_key in joined:
                out.setdefault((m.entity_key, m.merged_key), m)
    return sorted(out.values(), key=lambda m: m.id)


class InitialsMerge(StandingMerge, Protocol):
    """A standing merge of an acronym node into the one entity of the project its initials fitted then."""

    @property
    def merged_name(self) -> str: ...


IM = TypeVar("IM", bound=InitialsMerge)


def ambiguous_initials(mine: Nearby, merges: Sequence[IM], targets: Nearby) -> list[IM]:
    """The merges (of `targets`: entity key → (name, type)) whose acronym one of the document's names (`mine`)
    fits as well: "N.C." joined "New Caledonia" while it was the only place of those initials, and this document
    names "North Carolina". In the other order the acronym would have joined North Carolina, so the caller
    undoes it: fitting two names, it stays alone (and the two places are never one node through it)."""
    out = []
    for m in merges:
        if m.entity_key not in targets:
            continue
        letters = acronym_letters(m.merged_name).lower()
        target_type = targets[m.entity_key][1]
        if any(
            k not in (m.entity_key, m.merged_key)
            and types_compatible(t, target_type)
            and not foreign_reading(m.merged_name, k)
            and initials_fit(m.merged_key, letters, n, t)
            for k, (n, t) in mine.items()
        ):
            out.append(m)
    return out

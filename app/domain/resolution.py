"""Entity resolution at merge time (pure): each name a document extracted → the entity key it merges into.

The caller gathers the document's names (`DocumentNames`), looks up what the project already knows about
the keys `lookup_keys` lists (`Known`), and `resolve` decides per name, in this order:

1. evidence inside the document: an acronym the document defines ("Kessara Research Institute (KRI)"), a
   surname or first name alone that fits exactly one full person name of the document (never across
   documents: such aliases are scoped to the document);
2. the name is an existing entity (it stays itself), or a recorded alias of one;
3. the match key (app/domain/name_matching.py) of an existing entity of a compatible type;
4. another name of the document with the same match key (the plain form is preferred as the canonical);
5. an acronym whose initials fit exactly one entity of the document or the project;
6. across documents (app/domain/cross_document.py): the name the other way round ("Lisbon Treaty"), a root or
   surname alone fitting exactly one entity of a compatible type ("Siemens", "Dr. Okafor"), a near spelling the
   confusable guard lets through, a name spelt otherwise ("Evgeny Kouznetsov", app/domain/name_spellings.py),
   a given name's short form ("Emeka Okoye", app/domain/name_nicknames.py) — unless the document relates the
   two names: then they are two people.

Once decided, the document's full names may show earlier nodes of the project to be their aliases ("Okafor",
ingested before "Ngozi Okafor" was): those are listed as `absorptions` (worked out when read), merged after the
document.

A name that stays itself but is held by an entity of another specific type ("Orlin", a place, and now
"Orlin", a product) is kept apart under its qualified name, "Orlin (artifact)", for this document only (a
scoped alias), and the pair is suggested; later documents naming the product reach the qualified entity the
same way. Not when the document itself gives the name (or a form of it) two specific types, nor when a user
merged the qualified entity into the bare one.

With mode "suggest" no merge is applied: each match becomes a suggested pair (a name kept apart stays apart).
"off" is not resolved here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from app.domain.absorption import Absorption, absorptions
from app.domain.aliases import AliasSource
from app.domain.cross_document import (
    extension_candidates,
    initialled_candidates,
    lone_word_candidates,
    variant_rows,
)
from app.domain.document_names import DocumentNames
from app.domain.name_codes import acronym_fits, expansion_forms
from app.domain.name_index import NameIndex
from app.domain.name_matching import (
    acronym_letters,
    initials_match,
    is_acronym,
    is_person,
    match_key,
    qualified_name,
    read_as_initials_alone,
    specific_type,
    tokens,
    types_compatible,
)
from app.domain.name_nicknames import nickname_candidates, related_in_document
from app.domain.name_shapes import capitalised_name, person_name
from app.domain.name_spellings import phonetic_index, spelt_candidates
from app.domain.name_variants import confusable, inverted_forms, surname_of
from app.domain.names import entity_key
from app.domain.resolution_state import Decision, Known, Later, Resolution
from app.domain.spelling_candidates import close_candidates, near_spellings, spelling_candidates
from app.domain.state_abbreviations import foreign_reading

ResolutionMode = Literal["off", "suggest", "auto", "llm"]
# the modes that merge: their documents (and updates) run the final pass after the merge, and owe it until then
MERGING_MODES = frozenset({"auto", "llm"})
MATCH_INDEX = "\x1e"  # prefix of the internal alias rows that index entities by match key
VARIANT_ROW = MATCH_INDEX + "\x1d"  # those by phonetic or compact key (cross_document.py::variant_rows)
SAME_NAME_SCORE = 0.8  # a name held by an entity of another type: kept apart, suggested for review
_OWN_RULES = frozenset({"spelling", "year", "maker", "firm", "transliteration", "nickname", "root"})  # ledger names


def index_key(match: str) -> str:
    return MATCH_INDEX + match


def lookup_keys(doc: DocumentNames, definitions: dict[str, str]) -> set[str]:
    """Keys to lock and read before resolving: the names, their match keys and defined expansions."""
    keys: set[str] = set()
    for key in doc.names:
        match = doc.match(key)
        keys |= {key, match, *inverted_forms(match)}
    for acronym, expansion in definitions.items():
        keys |= {k for f in expansion_forms(expansion, acronym) for k in (entity_key(f), match_key(f, "organization"))}
    return keys


def qualified_keys(doc: DocumentNames) -> dict[str, str]:
    """Name key → the key of its qualified form, for the names given exactly one specific type."""
    return {
        key: entity_key(qualified_name(doc.names[key], next(iter(types))))
        for key, types in doc.specific.items()
        if len(types) == 1
    }


def index_lookups(doc: DocumentNames, definitions: dict[str, str]) -> set[str]:
    keys = {m for k in doc.names for m in (doc.match(k), *inverted_forms(doc.match(k)))}
    keys |= {s for k, n in doc.names.items() for s in variant_rows(n, doc.types.get(k, "unknown"))}
    return {index_key(k) for k in keys | {match_key(e, "organization") for e in definitions.values()}}


class _Resolver:
    def __init__(self, doc: DocumentNames, known: Known, definitions: dict[str, str]) -> None:
        self.doc, self.known, self.definitions = doc, known, definitions
        self.matches = {k: doc.match(k) for k in doc.names}
        self.groups: dict[str, list[str]] = {}
        for key, match in self.matches.items():
            self.groups.setdefault(match, []).append(key)
        self.done: dict[str, Decision] = {}
        self.visiting: set[str] = set()
        self.apart: dict[str, str] = {}  # key kept apart → display name of its qualified entity
        self.open: dict[str, set[str]] = {}  # key → entities it may name that the rules could not settle
        held = {t: (t, self.type_of(t)) for a, t in known.aliases.items() if a.startswith(VARIANT_ROW)}
        self.index = NameIndex(held | known.nearby | {k: (n, self.type_of(k)) for k, n in doc.names.items()})

    def type_of(self, key: str) -> str:
        return self.known.entity_types.get(key) or self.doc.types.get(key, "unknown")

    def two_people(self, key: str, other: str) -> bool:
        return is_person(self.type_of(key)) and related_in_document(key, other, self.doc.related)

    def resolve(self, key: str) -> Decision:
        if key in self.done:
            return self.done[key]
        if key in self.visiting:  # a cycle of evidence: the name stays itself
            return Decision(key)
        self.visiting.add(key)
        decision = self._decide(key)
        if decision.target == key:
            decision = self._other_type(key) or decision
        elif not decision.apart and foreign_reading(self.doc.names[key], decision.target):
            decision = Decision(key)  # "Mo." read as "Mexico" by its letters: app/domain/state_abbreviations.py
        self.visiting.discard(key)
        self.done[key] = decision
        return decision

    def _follow(self, key: str, target: str, source: AliasSource, evidence: str, *, scoped: bool = False) -> Decision:
        final = self.resolve(target).target if target in self.doc.names else target
        if final == key:
            return Decision(key)
        return Decision(final, source, evidence, scoped or target in self.apart)

    def _other_type(self, key: str) -> Decision | None:
        """The qualified entity for a name another entity of another specific type holds (module docstring)."""
        types = {t for k in self.groups[self.matches[key]] for t in self.doc.specific.get(k, ())}
        if len(types) != 1:
            return None
        (etype,) = types
        display = qualified_name(self.doc.names[key], etype)
        qualified = entity_key(display)
        held_by = self.known.entity_types.get(key)
        if held_by is not None:
            other = specific_type(held_by)
            if other is None or other == etype or self.known.aliases.get(qualified) == key:
                return None
            evidence = f"same name, other type: {key!r} is a {other}, this one a {etype}"
        elif qualified in self.known.entity_types:
            evidence = f"the {etype} named {self.doc.names[key]!r} is {display!r}"
        else:
            return None
        self.apart[key] = display
        return Decision(qualified, "rule", evidence, scoped=True, apart=True)

    def _decide(self, key: str) -> Decision:
        name, etype = self.doc.names[key], self.doc.types.get(key, "unknown")
        if (local := self._defined_acronym(key, name)) is not None:
            return local
        if (partial := self._partial_name(key, name, etype)) is not None:
            return partial
        if key in self.known.entity_types:
            return Decision(key)
        if (aliased := self.known.aliases.get(key)) is not None:
            return Decision(aliased, "rule", f"recorded alias of {aliased!r}")
        match = self.matches[key]
        for candidate in (match, self.known.aliases.get(match), self.known.aliases.get(index_key(match))):
            if candidate and candidate != key and candidate in self.known.entity_types:
                if self.two_people(key, candidate):  # "Bob Everly" and "Robert Everly" met in one text
                    continue
                if not types_compatible(etype, self.known.entity_types[candidate]):
                    self.open.setdefault(key, set()).add(candidate)  # one name, two types: the judge may tell
                    continue
                evidence = f"same name as {candidate!r} once normalised ({match!r})"
                if candidate in self.doc.names and self.resolve(candidate).apart:  # this document's other type
                    return self._follow(key, candidate, "rule", evidence)
                return Decision(candidate, "rule", evidence)
        group = self.groups[match]
        canonical = match if match in group else group[0]
        if (
            canonical != key
            and not self.two_people(key, canonical)
            and all(types_compatible(etype, self.type_of(k)) for k in group)
        ):
            return self._follow(key, canonical, "rule", f"same name as {canonical!r} once normalised ({match!r})")
        if is_acronym(name):
            if acronym_letters(name) in self.known.defined:  # the text says what it stands for: no guessing
                return Decision(key)
            return self._initials(key, name, etype) or self._capitals(key, name, etype) or Decision(key)
        return self._inverted(key, name, etype, match) or self._across(key, name, etype) or Decision(key)

    def _inverted(self, key: str, name: str, etype: str, match: str) -> Decision | None:
        for inverted in [] if is_person(etype) else inverted_forms(match):
            known = (inverted, self.known.aliases.get(inverted), self.known.aliases.get(index_key(inverted)))
            for candidate in (*known, *self.groups.get(inverted, [])):
                if (
                    candidate
                    and candidate != key
                    and (candidate in self.known.entity_types or candidate in self.doc.names)
                    and types_compatible(etype, self.type_of(candidate))
                ):
                    return self._follow(key, candidate, "rule", f"{name!r} is {candidate!r} the other way round")
        return None

    def _across(self, key: str, name: str, etype: str) -> Decision | None:
        """A root or surname alone, or a near spelling, fitting exactly one entity (cross_document.py)."""
        found, rule = lone_word_candidates(name, etype, self.index, exclude=key)
        if found and rule == "root" and (maker := extension_candidates(name, etype, self.index, key))[1] == "maker":
            found, rule = maker  # a product line alone beside one product with its maker ("Skyfold"): that product
        if not found:
            found, rule = initialled_candidates(name, etype, self.index, exclude=key), "partial"
        scoped = bool(found) and rule != "maker"
        if not found:
            found, rule = near_spellings(name, etype, self.index, exclude=key), "similarity"
        if not found:
            found, rule = spelling_candidates(name, etype, self.index, exclude=key), "spelling"
        if not found:
            found, rule = extension_candidates(name, etype, self.index, exclude=key)
            # a year left out fits one event now, another year may come later: decided again per document; a
            # product without its maker is recorded, as the line alone cannot read the maker's name later
            scoped = rule == "year"
        if not found:
            found, rule = spelt_candidates(name, etype, self.index.sounding(name, etype), key), "transliteration"
        if not found and (family := self.index.surnames.get(surname_of(name) or "")):
            found, rule = nickname_candidates(name, etype, self.index.names, family, key, self.doc.related), "nickname"
        near = found or close_candidates(name, etype, self.index, exclude=key)
        targets = {self.resolve(k).target if k in self.doc.names else k for k in near}
        if len(targets) != 1 or not found or key in targets:
            self.open.setdefault(key, set()).update(targets - {key})
            return None
        (target,) = targets
        source: AliasSource = "partial" if rule == "partial" else "similarity" if rule == "similarity" else "rule"
        shown = self.doc.names.get(target) or self.index.names.get(target, (target,))[0]
        evidence = f"{name!r} fits only {shown!r} ({rule})"
        return Decision(target, source, evidence, scoped=scoped, rule=rule if rule in _OWN_RULES else None)

    def _capitals(self, key: str, name: str, etype: str) -> Decision | None:
        """A long name in capitals that is another name's letters joined otherwise ("TELENOVA" / "Tele-Nova")."""
        found = spelling_candidates(name, etype, self.index, exclude=key)
        targets = {self.resolve(k).target if k in self.doc.names else k for k in found}
        if len(targets) != 1 or key in targets:
            return None
        (target,) = targets
        shown = self.doc.names.get(target) or self.index.names.get(target, (target,))[0]
        return Decision(target, "rule", f"{name!r} fits only {shown!r} (spelling)", rule="spelling")

    def _expansion_key(self, expansion: str, acronym: str) -> str | None:
        """The document name or project entity an acronym's expansion (or its longest tail naming one) names."""
        for form in expansion_forms(expansion, acronym):
            exact, match = entity_key(form), match_key(form, "organization")
            for key in (exact, *self.groups.get(match, [])):
                if key in self.doc.names:
                    return key
            for candidate in (exact, match, self.known.aliases.get(exact), self.known.aliases.get(index_key(match))):
                if candidate and candidate in self.known.entity_types:
                    return candidate
        return None

    def _defined_acronym(self, key: str, name: str) -> Decision | None:
        if not is_acronym(name):
            return None
        expansion = self.definitions.get(acronym_letters(name))
        target = self._expansion_key(expansion, name) if expansion else None
        fits = target is not None and acronym_fits(expansion or "", name, self.type_of(key), self.type_of(target))
        if target is None or target == key or not fits:
            return None
        # an acronym that is an entity, or an alias of another, elsewhere in the project keeps that meaning
        # there; this document's use goes to its own expansion
        decision = self._follow(key, target, "acronym", f"the document defines {name} as {expansion!r}")
        elsewhere = key in self.known.entity_types or self.known.aliases.get(key, decision.target) != decision.target
        return replace(decision, scoped=elsewhere) if decision.source else decision

    def _partial_name(self, key: str, name: str, etype: str) -> Decision | None:
        words = tokens(name, etype if is_person(etype) else "person")
        if len(words) != 1 or not (is_person(etype) or etype.lower() in ("", "unknown")) or not person_name(name):
            return None
        word = words[0]
        fits = {
            other
            for other, other_name in self.doc.names.items()
            if other != key
            and is_person(self.doc.types.get(other, ""))
            and person_name(other_name)
            and len(full := tokens(other_name, "person")) >= 2
            and word in (full[0], full[-1])
        }
        targets = {self.resolve(k).target for k in fits}
        if len(targets) != 1:
            return None
        (target,) = targets
        if target == key:
            return None
        full_name = self.doc.names.get(target, target)
        return Decision(target, "partial", f"{name!r} alone in a document naming {full_name!r}", scoped=True)

    def _initials(self, key: str, name: str, etype: str) -> Decision | None:
        letters = acronym_letters(name)
        local = {
            self.resolve(k).target
            for k, n in self.doc.names.items()
            if k != key
            and not is_acronym(n)
            and capitalised_name(n)
            and initials_match(n, letters)
            and types_compatible(etype, self.type_of(k))
        }
        local = {k for k in local if not foreign_reading(name, k)}  # "R.I." is Rhode Island's, not any R. I.'s
        project = {
            k
            for k in self.known.initials.get(letters, [])
            if types_compatible(etype, self.type_of(k)) and not foreign_reading(name, k)
        }
        candidates = local or project
        if len(candidates) != 1 or key in candidates or not (local or read_as_initials_alone(name)):
            self.open.setdefault(key, set()).update(candidates - {key})  # the judge may read "BC" by its context
            return None
        (target,) = candidates
        return Decision(
            target,
            "acronym",
            f"{name} are the initials of {target!r}, the only such "
            + ("name in the document" if local else "entity in the project"),
        )


def _guarded(resolver: _Resolver, key: str, other: str) -> bool:
    """The confusable guard on a pair: no judge's verdict joins what it keeps apart."""
    other_name, other_type = resolver.index.names.get(other, (other, resolver.type_of(other)))
    return confusable(resolver.doc.names[key], resolver.type_of(key), other_name, other_type)


def resolve(
    doc: DocumentNames,
    known: Known,
    definitions: dict[str, str],
    mode: ResolutionMode,
    judged: Mapping[str, tuple[str, str]] | None = None,
) -> Resolution:
    """`judged`: name key → (entity key, reason) the LLM judge found to be the same (mode "llm"), applied to
    names the rules left as themselves when that entity is still there."""
    resolver = _Resolver(doc, known, definitions)
    decisions = {key: resolver.resolve(key) for key in doc.names}
    open_pairs = {k: found for k, found in resolver.open.items() if decisions[k].target == k or decisions[k].apart}
    for key, (target, reason) in (judged or {}).items():
        if target not in open_pairs.get(key, ()) or _guarded(resolver, key, target):  # settled, or never to join
            continue
        final = decisions[target].target if target in decisions else target
        if final != key and (final in known.entity_types or final in known.nearby or final in doc.names):
            decisions[key] = Decision(final, "similarity", f"LLM judge: {reason}", scoped=True, rule="llm_judge")
    suggestions = [
        (k, d.target, SAME_NAME_SCORE, d.evidence) for k, d in decisions.items() if d.apart and k in known.entity_types
    ]
    if mode == "suggest":
        suggestions += [(k, d.target, 1.0, d.evidence) for k, d in decisions.items() if d.target != k and not d.apart]
        decisions = {k: d if d.apart else Decision(k) for k, d in decisions.items()}
    display: dict[str, str] = {
        decisions[k].target: name
        for k, name in resolver.apart.items()
        if decisions[k].apart and decisions[k].target not in known.entity_types
    }
    for decision in decisions.values():
        if decision.target in doc.names and decision.target not in known.entity_types:
            display.setdefault(decision.target, doc.names[decision.target])
    index: dict[str, str] = {}
    for key, decision in decisions.items():
        ikey = index_key(resolver.matches[key])
        if decision.source not in (None, "rule") or decision.scoped:  # evidence of one document, or initials
            continue
        if resolver.matches[key] != decision.target and ikey not in known.aliases:
            index.setdefault(ikey, decision.target)
    stays = {k: (doc.names[k], resolver.type_of(k)) for k, d in decisions.items() if d.target == k and not d.apart}
    index.update(phonetic_index(stays, known.aliases, MATCH_INDEX, variant_rows))
    full = {
        d.target: (doc.names[d.target], resolver.type_of(d.target))
        for d in decisions.values()
        if d.target in doc.names and not d.apart
    }
    nearby = dict(known.nearby)  # an earlier node this document merged into too
    absorbed: Sequence[Absorption] = Later(lambda: absorptions(full, nearby, set(doc.names)))
    if mode == "suggest":
        suggestions += [(a.key, a.target, 1.0, a.evidence) for a in absorbed]
        absorbed = []
    return Resolution(decisions, suggestions, index, display, absorbed, open_pairs)

"""Candidates across documents (pure): what the project holds near a document's names, and the rules that
read it: a root or surname alone, initials, extensions (spellings: app/domain/spelling_candidates.py), and
retroactive absorption of an earlier short node.

`nearby_ranges` lists what to read: key prefixes ("siemens "), reversed-key prefixes (" okafor" reversed, the
people of that surname) and exact keys (a short node "okafor", an acronym node "bis"). The caller reads the
entities there (`Nearby`: key → (name, type)); `lone_word_candidates` and the spelling rules propose targets
for one name and `absorptions` finds earlier nodes a full name of this document makes aliases of itself.
Every candidate passes the type check and the confusable guard (app/domain/name_variants.py); the resolver
accepts a candidate only when exactly one entity fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from app.domain.name_designations import (
    adjective_prefixes,
    contraction_rows,
    contractions,
    designated_cores,
    dotted_cut,
    dotted_cuts,
    dotted_initials,
    dotted_parts,
    people_word,
    truncated_letters,
    truncates,
    truncations,
)
from app.domain.name_index import NameIndex
from app.domain.name_matching import (
    fold,
    is_acronym,
    is_person,
    match_key,
    specific_type,
    tokens,
    types_compatible,
)
from app.domain.name_shapes import capitalised_name, person_name, proper_root
from app.domain.name_spellings import PLACE_TYPES, SLOTS, phonetic_slots
from app.domain.name_variants import (
    compact_key,
    extension_rule,
    lone_word,
    root_of,
    surname_of,
    written_ends,
)
from app.domain.names import entity_key

# A place or an event alone is another entity than the things named after it: "Varga" the town is not
# "Varga Airport", "Lisbon" is not the "Lisbon Treaty".
_NOT_BY_ROOT = frozenset({"location", "place", "geo", "gpe", "city", "country", "region", "event", "facility"})
PRODUCT_TYPES = frozenset({"artifact", "product", "device", "software", "model", "vehicle", "technology"})
_MIN_VARIANT = 4
_JOINED_PARTS = 4  # a head of up to four words is read with every spacing and hyphenation (8 keys)
_COMPACT_PREFIX = 3  # a one-word name reads the keys starting with its first letters ("geospring" → "geo spring")
# Common nouns: in "liver cancer" or "test results" the first word names another thing than the whole.
_GLUED_INITIALS = re.compile(r"\b([A-Z])\.(?=[A-Z]\b)")  # "Y.S. Okonkwo" is "Y. S. Okonkwo"
_CONCEPTS = frozenset({"concept", "category", "topic", "term", "idea", "condition", "disease", "procedure"})


@dataclass(frozen=True)
class Ranges:
    prefixes: frozenset[str]  # keys starting with one of these
    reversed_prefixes: frozenset[str]  # keys whose reverse starts with one of these
    exact: frozenset[str]


def prefix_end(prefix: str) -> str:
    """The least string above every key starting with `prefix`: keys in [prefix, prefix_end(prefix)) start with it."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _person_like(entity_type: str) -> bool:
    return is_person(entity_type) or specific_type(entity_type) is None


@lru_cache(maxsize=65536)  # asked of every name near each acronym node
def initials_key(name: str, entity_type: str) -> str | None:
    """The key an undefined acronym of a name would have ("bis" for "Bank for International Settlements")."""
    if is_person(entity_type):
        return None
    capitals = [w for w in name.split() if w[:1].isupper()]
    return "".join(w[0] for w in capitals).lower() if len(capitals) >= 3 else None


def variant_rows(name: str, entity_type: str) -> list[str]:
    """The index rows (without their prefix) an entity of this name is recorded under for names no key range
    reaches: its phonetic key's slots (a person or place, app/domain/name_spellings.py) and its compact key's
    ("e-health record" for "electronic health records": no prefix of one is the other's)."""
    return list(_variant_rows(name, entity_type))


@lru_cache(maxsize=65536)  # asked for every name of a document twice (to read, to record), and names recur
def _variant_rows(name: str, entity_type: str) -> tuple[str, ...]:
    rows = phonetic_slots(name, entity_type) + contraction_rows(name, entity_type)
    if (
        not _person_like(entity_type)
        and not is_acronym(name)
        and (compact := compact_key(match_key(name, entity_type)))
    ):
        rows += [f"\x1dcompact {compact}#{i}" for i in range(SLOTS)]
    return tuple(rows)


@lru_cache(maxsize=65536)
def term_initials(name: str, entity_type: str) -> frozenset[str]:
    """The keys an undefined acronym of a term of three words or more would have, capitalised or not ("mri" for
    "magnetic resonance imaging", "t2d" for "type II diabetes"), with and without its small words."""
    if is_person(entity_type) or is_acronym(name):
        return frozenset()
    words = match_key(name, entity_type).split()
    if len(words) < 3:
        return frozenset()
    found = {"".join(w[0] for w in words), "".join(w[0] for w in words if w not in ("of", "for", "the", "and"))}
    return frozenset(f for f in found if len(f) >= 3)


def nearby_ranges(names: list[tuple[str, str]]) -> Ranges:
    """What to read for the (name, type) pairs of a document: what each of them asks for, together."""
    parts = [_ranges_of(name, etype) for name, etype in names]
    return Ranges(
        frozenset().union(*(p.prefixes for p in parts)),
        frozenset().union(*(p.reversed_prefixes for p in parts)),
        frozenset().union(*(p.exact for p in parts)),
    )


@lru_cache(maxsize=65536)  # a document's names are asked for again by its final pass, and recur across documents
def _ranges_of(name: str, etype: str) -> Ranges:
    return _name_ranges([(name, etype)])


def _name_ranges(names: list[tuple[str, str]]) -> Ranges:
    prefixes: set[str] = set()
    reversed_prefixes: set[str] = set()
    exact: set[str] = set()
    for name, etype in names:
        if (word := lone_word(name, etype)) is not None:
            for form in _as_written(name, word):
                prefixes.add(form + " ")
                reversed_prefixes.add((" " + form)[::-1])
        if (root := root_of(name, etype)) is not None:
            for form in _as_written(name, root):  # and "zürich" for "Zürich Insurance Group"
                prefixes.add(form + " ")
                exact.add(form)
            exact.update(written_ends(name, etype))  # "rolls-royce" alone for "Rolls-Royce Holdings plc"
        if is_person(etype) and (surname := surname_of(name)) is not None:
            for form in _as_written(name, surname) | set(written_ends(name, etype)):  # and "smith-jones"
                reversed_prefixes.add((" " + form)[::-1])
                exact.add(form)
                prefixes.add(form + ",")  # written family name first: "Kariuki, A. K."
        if (initials := initials_key(name, etype)) is not None:
            exact |= {initials, "".join(f"{letter}." for letter in initials)}  # "BIS" or "B.I.S."
        exact |= term_initials(name, etype)
        for core in designated_cores(name, etype):  # "Malta" for "Republic of Malta", "Syria" for "Syrian ..."
            exact |= _joinings(core.split())  # a match key has no hyphens; "Guinea-Bissau"'s key has
            exact |= _written_span(name, core)  # nor diacritics: "Türkiye"'s key has
        if (word := _place_word(name, etype)) is not None:  # "Syria" reads "syrian arab republic"
            prefixes.update(adjective_prefixes(word))  # and "Italy" "italian ...", "Slovakia" "slovak ..."
        if (letters := truncated_letters(name, etype)) is not None:  # "Colo.": the places starting "colo"
            prefixes.add(letters)
        exact.update(
            truncations(name, etype) + contractions(name, etype)
        )  # and the other way: "Colorado" reads "colo."
        if (dotted := dotted_initials(name, etype)) is not None:  # "North Carolina" reads "n.c."
            exact.add(dotted)
            exact.update(dotted_cuts(name, etype))  # and "West Virginia" reads "w.va."
        if not _person_like(etype):
            _variant_ranges(name, etype, prefixes, reversed_prefixes, exact)
    return Ranges(frozenset(prefixes), frozenset(reversed_prefixes), frozenset(exact))


def _place_word(name: str, etype: str) -> str | None:
    """A place's name of one word (its key), where designations made of its adjective begin."""
    words = match_key(name, etype).split()
    if specific_type(etype) not in PLACE_TYPES or len(words) != 1 or len(words[0]) < 4 or is_acronym(name):
        return None
    return words[0]


def _as_written(name: str, word: str) -> set[str]:
    """The folded word, and as keys hold it when it has letters folding changes ("østergaard"), wherever the name
    writes it: last, or first before a comma ("Østergaard, J. B.")."""
    return {word} | {w for w in (x.strip(".,;:") for x in entity_key(name).split()) if w and fold(w) == word}


def _variant_ranges(name: str, etype: str, prefixes: set[str], reversed_prefixes: set[str], exact: set[str]) -> None:
    """Where the other writings of a thing's name lie: longer names starting or ending with it (a year after it, a
    maker before it), the name without its year or maker, its compound joined, hyphenated or split."""
    match = match_key(name, etype)
    words = match.split()
    written = entity_key(name).split()
    for key in {match, fold(name), " ".join(written)}:
        if len(key) >= _MIN_VARIANT:
            prefixes.add(key + " ")
            reversed_prefixes.add((" " + key)[::-1])
    if len(written) >= 2:
        exact.update({" ".join(written[:-1]), " ".join(written[1:])})  # as written: keys keep accents ("Lodève")
        if is_acronym(name.split()[-1]):  # "High-Voltage DC": the names going on with the same words
            prefixes |= {head + " " for head in _joinings(written[:-1])} | {fold(" ".join(name.split()[:-1])) + " "}
        for k in (2, 3):  # and the other way: "high-voltage direct current" → "high-voltage dc"
            if len(written) > k:
                letters = "".join(w[0] for w in written[-k:])
                exact.update(f"{head} {letters}" for head in _joinings(written[:-k]))
    if len(words) >= 2:
        exact.update({"".join(words), "-".join(words), " ".join(words[:-1]), " ".join(words[1:])})
        if specific_type(etype) in PRODUCT_TYPES:
            exact.add(words[1])
    elif len(words) == 1 and len(words[0]) >= 6 and words[0].isalpha():
        prefixes.add(words[0][:_COMPACT_PREFIX])


def _written_span(name: str, folded: str) -> set[str]:
    """Words of the name (`folded`: as match keys hold them) as the name writes them, joined every way: keys keep
    the letters folding changes, so "Republic of Türkiye" reads the node "Türkiye" by "türkiye", not "turkiye".
    The cases `_as_written` leaves: a span of words, anywhere in the name."""
    written = [w.strip(".,;:") for w in entity_key(name).split()]
    return {
        joined
        for start in range(len(written))
        for end in range(start + 1, len(written) + 1)
        if fold(" ".join(written[start:end])) == folded
        for joined in _joinings(written[start:end])
    }


def _joinings(words: list[str]) -> set[str]:
    """The words joined by spaces or hyphens every way ("high voltage" → also "high-voltage"): a key holds the
    hyphens as its writer put them, and "high voltage direct current" must read "High-Voltage DC" as the hyphened
    "high-voltage direct current" does, whichever of them came first. Heads of more than four parts as written."""
    parts = [p for w in words for p in w.split("-") if p]
    if not 1 <= len(parts) <= _JOINED_PARTS:
        return {" ".join(words)}
    found = {parts[0]}
    for part in parts[1:]:
        found = {f"{head}{glue}{part}" for head in found for glue in (" ", "-")}
    return found | {" ".join(words)}


class _Shape(NamedTuple):
    """What the candidate rules below read of one name before they look at another: the same in every index, and
    a final pass asks them of each of its names two or three times (absorption.py::lone_fit)."""

    designation: str  # "truncated" ("Colo."), "dotted" ("W.Va."), "cores" (looked up by `match`) or "" (none)
    match: str
    word: str | None  # `lone_word`
    people: bool  # a root or surname alone may be a person's surname
    things: bool  # and a thing's first word
    initialled: tuple[str, ...] | None  # an initialled person's name: its words ("k", "l", "ndungu")
    extended: bool  # `extension_candidates` may find names extending it


@lru_cache(maxsize=65536)
def _shape(name: str, etype: str) -> _Shape:
    match = match_key(name, etype)
    if truncated_letters(name, etype) is not None:
        designation = "truncated"
    elif dotted_parts(name, etype) is not None:
        designation = "dotted"
    else:
        designation = "" if designated_cores(name, etype) or not capitalised_name(name) else "cores"
    word = lone_word(name, etype)
    words = tuple(tokens(_GLUED_INITIALS.sub(r"\1. ", name), "person"))
    initials = _person_like(etype) and len(words) >= 2 and all(len(w) == 1 for w in words[:-1])
    return _Shape(
        designation,
        match,
        word,
        word is not None and _person_like(etype) and person_name(name),
        word is not None and not is_person(etype) and specific_type(etype) not in _NOT_BY_ROOT | _CONCEPTS,
        words if initials else None,
        not (is_person(etype) or specific_type(etype) is None or is_acronym(name)),
    )


def lone_word_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> tuple[set[str], str]:
    """Entities a root or surname written alone may stand for: people whose surname it is (a person's or an
    untyped name), things of a compatible type whose first word it is, the designated place a place's short name
    is ("Malta" → "Republic of Malta"). (keys, rule)."""
    if designated := designated_candidates(name, etype, index, exclude):
        return designated, "designation"
    shape = _shape(name, etype)
    word = shape.word
    if word is None:
        return set(), ""
    parts = word.split()  # a word joined by hyphens ("Smith-Jones", "Rolls-Royce") is several parts
    people = set()
    if shape.people:
        people = {
            k
            for k in index.surnames.get(parts[-1], set()) - {exclude}
            if person_name(index.names[k][0]) and _ends_with(tokens(index.names[k][0], "person"), parts)
        }
    things = set()
    if shape.things:
        things = {
            key
            for key in index.roots.get(parts[0], set()) - {exclude}
            if specific_type(index.names[key][1]) not in _NOT_BY_ROOT | _CONCEPTS
            and types_compatible(etype, index.names[key][1])
            and proper_root(name, index.names[key][0])
            and _starts_with(tokens(*index.names[key]), parts)
        }
    return people | things, "partial" if people else "root"


def _ends_with(words: list[str], parts: list[str]) -> bool:
    """A person's words end with the parts of a surname and have a given name before them."""
    return len(words) > len(parts) and words[-len(parts) :] == parts


def _starts_with(words: list[str], parts: list[str]) -> bool:
    """A thing's words start with the parts of its root and go on."""
    return len(words) > len(parts) and words[: len(parts)] == parts


def designated_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> set[str]:
    """The designated places a place's short name may stand for ("Malta" → "Republic of Malta"), or the places
    a name cut short may ("Colo." → "Colorado")."""
    shape = _shape(name, etype)
    if shape.designation == "truncated":
        return {
            k
            for k, (other, other_type) in index.names.items()
            if k != exclude and types_compatible(etype, other_type) and truncates(name, other, other_type)
        }
    if shape.designation == "dotted":  # "W.Va." → "West Virginia"
        return {
            k
            for k, (other, other_type) in index.names.items()
            if k != exclude and types_compatible(etype, other_type) and dotted_cut(name, other, other_type)
        }
    if not shape.designation:  # a designated name itself, or not a name
        return set()
    cores = index.cores.get(shape.match, set()) - {exclude}
    return {k for k in cores if types_compatible(etype, index.names[k][1]) and not _named_alone(k, index)}


def _named_alone(key: str, index: NameIndex) -> bool:
    """The designation `key` is made of a people's name that a place of the project goes by alone ("Niger
    Republic" beside "Niger"): it may be that place's, so no name made with a suffix ("Nigeria") joins it."""
    word = people_word(*index.names[key])
    return word is not None and any(
        specific_type(t) in PLACE_TYPES for k, (n, t) in index.names.items() if k != key and match_key(n, t) == word
    )


def initialled_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> set[str]:
    """People an initialled name fits ("K. L. Ndungu" → "Kamau L. Ndungu"): the same surname, as many given
    names, each starting with its initial."""
    words = _shape(name, etype).initialled
    if words is None:
        return set()
    found = set()
    for key in index.surnames.get(words[-1], set()) - {exclude}:
        other_name, other_type = index.names[key]
        other = tokens(other_name, "person")
        if (
            is_person(other_type)
            and 2 <= len(other) <= len(words)  # "Y. S. Okonkwo" may be "Yetunde Okonkwo", never "Yetunde A. Okonkwo"
            and len(other[0]) > 1  # a full given name, not initials again
            and all(o.startswith(w) for w, o in zip(words[:-1], other[:-1], strict=False))
        ):
            found.add(key)
    return found


def extension_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> tuple[set[str], str]:
    """Things of the same specific type whose name is this one with a year after it or (products) a maker before
    it (`extension_rule`), and the rule. Several fits (two years of one event, two products of a line) are
    ambiguous: the caller accepts exactly one."""
    shape = _shape(name, etype)
    if not shape.extended:
        return set(), ""
    kind = specific_type(etype)
    mine, product = shape.match, kind in PRODUCT_TYPES
    words = mine.split()
    # the only names `extension_rule` may find: this one's words and one more (a year, a firm's trade), or (a
    # product) a maker's name before this one's words, so with them from its second word on
    near = index.heads.get((kind, " ".join(words)), set())
    if product and words:
        near = near | index.seconds.get((kind, words[0]), set())
    found: dict[str, str] = {}
    for key in near:
        if key == exclude:
            continue
        other, other_type = index.names[key]
        if (rule := extension_rule(mine, match_key(other, other_type), product)) is not None:
            found[key] = rule
    return set(found), ",".join(sorted(set(found.values())))

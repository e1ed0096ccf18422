"""Candidates by spelling (pure): things of the same type written with nearly the same letters, or with the same
letters joined, hyphenated or abbreviated otherwise; and the close pairs the rules cannot accept but the LLM judge
may. Each reads a `NameIndex` of the names near the document's (app/domain/cross_document.py says what is read);
the resolver (app/domain/resolution.py) accepts a candidate only when exactly one entity fits.
"""

from __future__ import annotations

from app.domain.name_index import NameIndex
from app.domain.name_matching import is_acronym, is_person, match_key, specific_type
from app.domain.name_variants import (
    abbreviated_tail,
    compact_key,
    confusable,
    near_spelling,
    root_of,
    surname_of,
)


def near_spellings(name: str, etype: str, index: NameIndex, exclude: str = "") -> set[str]:
    """Entities whose name is a near spelling of this one, of the same type, that the guard lets through."""
    if is_person(etype) or specific_type(etype) is None or (root := root_of(name, etype)) is None:
        return set()
    mine = match_key(name, etype)
    found = set()
    for key in index.roots.get(root, set()) - {exclude}:
        other, other_type = index.names[key]
        if (
            specific_type(other_type) == specific_type(etype)
            and near_spelling(mine, match_key(other, other_type))
            and not confusable(name, etype, other, other_type)
        ):
            found.add(key)
    return found


def spelling_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> set[str]:
    """Things of the same specific type written with the same letters but joined, hyphenated or split otherwise, or
    with their last word in the other number (`compact_key`), or with their last words as their acronym
    (`abbreviated_tail`). No word differs otherwise, so the guard has nothing to tell apart."""
    kind = specific_type(etype)
    if is_person(etype) or kind is None:
        return set()
    mine = match_key(name, etype)
    compact = compact_key(mine)
    capitals = is_acronym(name)
    found = {
        key
        for key in (index.compact.get(compact, set()) if compact else set()) - {exclude}
        if specific_type(other_type := index.names[key][1]) == kind
        and (other := match_key(index.names[key][0], other_type)) != mine  # the same key is the exact rule's
        # a long name in capitals ("TELENOVA") is its letters, as the exact rule reads it: the same letters only
        and (not (capitals or is_acronym(index.names[key][0])) or _letters(other) == _letters(mine))
    }
    if capitals:
        return found
    tailed = set(index.names) if len(name.split()) >= 2 and is_acronym(name.split()[-1]) else index.tailed
    return found | {
        key
        for key in tailed
        if key != exclude and specific_type(index.names[key][1]) == kind and abbreviated_tail(name, index.names[key][0])
    }


def _letters(match: str) -> str:
    return match.replace(" ", "").replace("-", "")


def close_candidates(name: str, etype: str, index: NameIndex, exclude: str = "") -> set[str]:
    """Entities the rules cannot accept but the LLM judge may (app/domain/judge.py): a person of the same surname
    whose first name the guard does not set apart ("N. Okafor" / "Ngozi Okafor"), a thing of the same root whose
    name is a near spelling or the same words but of another type."""
    if is_person(etype):
        surname = surname_of(name)
        near = index.surnames.get(surname, set()) if surname is not None else set()
    else:
        root = root_of(name, etype)
        near = index.roots.get(root, set()) if root is not None else set()
    mine = match_key(name, etype)
    found = set()
    for key in near - {exclude}:
        other, other_type = index.names[key]
        if confusable(name, etype, other, other_type):
            continue
        theirs = match_key(other, other_type)
        if is_person(etype) or near_spelling(mine, theirs) or sorted(mine.split()) == sorted(theirs.split()):
            found.add(key)
    return found

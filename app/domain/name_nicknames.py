"""One person's given name and its short form (pure): "Bill Hale" / "William Hale", "Emeka Okoye" /
"Chukwuemeka Okoye".

Two sources, and neither is a list of the names a test or a benchmark writes:
- the common English diminutives of `name_words.DIMINUTIVES` (one formal name each: "Chris", "Sam" or "Alex"
  may stand for several, so they are not there), which the match key already reads;
- a given name clipped to its first or last letters, the habit of many naming cultures ("Emeka" for
  "Chukwuemeka", "Seun" for "Oluwaseun"): the short form keeps four letters or more and drops three or more,
  and is no given name of the US Census (`name_sounds.census_given_name`). An English given name is a name of
  its own ("Bella" / "Isabella", "Tina" / "Christina", "Arlene" / "Darlene" may be two people), and a short
  clip says too little ("Wei" / "Zhiwei", "Tunde" / "Yetunde" are other names). A man's name and the woman's
  name made from it by a feminine ending ("Wilhelm" / "Wilhelmina", "Marv" / "Marvella") are two names too.

A short form is one person's only when exactly one person of the project with that family name has a given
name it fits (the resolver's rule for every candidate), and the confusable guard lets such a pair through
(`name_variants.confusable`). A document that names both forms and relates one to the other says they are
two people (`related_in_document`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from app.domain.name_matching import is_acronym, is_person, tokens
from app.domain.name_sounds import census_given_name
from app.domain.name_words import DIMINUTIVES

MIN_CLIPPED = 4  # letters a clipped given name keeps
MIN_DROPPED = 3  # letters it drops
FEMININE_ENDINGS = frozenset({"a", "ina", "ine", "ella", "ette", "etta"})


def clipped(short: str, formal: str) -> bool:
    """`short` is `formal` cut to its first or last letters (folded words; module docstring)."""
    if len(short) < MIN_CLIPPED or len(formal) - len(short) < MIN_DROPPED or not short.isalpha():
        return False
    if census_given_name(short):
        return False
    if formal.startswith(short):
        return formal[len(short) :] not in FEMININE_ENDINGS
    return formal.endswith(short)


def nickname_pair(a: str, b: str) -> bool:
    """The folded given names `a` and `b` are one given name and its short form, either way round."""
    if a == b:
        return False
    return DIMINUTIVES.get(a) == b or DIMINUTIVES.get(b) == a or clipped(a, b) or clipped(b, a)


def _person_words(name: str, entity_type: str) -> list[str] | None:
    if not is_person(entity_type) or is_acronym(name):
        return None
    words = tokens(name, entity_type)
    return words if len(words) >= 2 and len(words[0]) > 1 else None


def nickname_candidates(
    name: str,
    entity_type: str,
    names: Mapping[str, tuple[str, str]],
    family: Collection[str],
    exclude: str,
    related: Collection[tuple[str, str]] = (),
) -> set[str]:
    """The keys among `family` (the people of this name's family name; `names`: key → (name, type)) whose
    given name is this name's given name's short form or the other way round, the rest of the names the same
    ("Emeka Okoye" → "Chukwuemeka Okoye"), and that the document (`related`: its relations' ends) does not
    relate to this name (`exclude`)."""
    mine = _person_words(name, entity_type)
    if mine is None:
        return set()
    found = set()
    for key in family:
        theirs = _person_words(*names[key]) if key != exclude else None
        if theirs is None or related_in_document(key, exclude, related):
            continue
        if theirs[1:] == mine[1:] and nickname_pair(mine[0], theirs[0]):
            found.add(key)
    return found


def related_in_document(a: str, b: str, related: Collection[tuple[str, str]]) -> bool:
    """The document states a relation between the names keyed `a` and `b` (either way round)."""
    return (a, b) in related or (b, a) in related

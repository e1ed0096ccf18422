"""A country's name and its designation (pure): "Malta" / "Republic of Malta", "Israel" / "State of Israel",
"Venezuela" / "Bolivarian Republic of Venezuela" — one state, written with or without its form of government.

A place written "<words> <form of government> of [the] <core>" ("Kingdom of the Netherlands") is designated,
and its core ("netherlands") is the name the same state goes by alone. The forms are those of one sovereign
state (republic, kingdom, state, principality, ...): "City of London", "Port of Varga" or "University of Malta"
name something else than the place after "of". Only the short name joins the designated one, never two
designations of one core ("Republic of the Congo" / "Democratic Republic of the Congo" are two states), and the
resolver accepts it only when exactly one designated place of the project has that core. A designation that
says "Democratic" or "People's" is left out: those words mark one of two states sharing a name ("Democratic
People's Republic of Korea" beside the "Republic of Korea", the two Congos), so the name alone may be the other.

A place's name cut short with a period ("Colo." / "Colorado", "Calif." / "California") is the one place of the
project whose one-word name starts with those letters (three to five, and three letters cut at least: "Mt.",
"St." are words of their own, "Niger." is no cut of "Nigeria").
Its initials written with periods ("N.C." / "North Carolina") are one too, even for two words: the periods say
each letter is a word cut short, unlike "US" or "EU", which are words of their own.
"""

from __future__ import annotations

import re
from functools import lru_cache

from app.domain.name_matching import match_key, specific_type
from app.domain.name_shapes import capitalised_name
from app.domain.name_spellings import PLACE_TYPES

_FORMS = frozenset(
    {"republic", "kingdom", "state", "commonwealth", "federation", "principality", "sultanate", "emirate", "duchy"}
    | {"confederation", "union", "dominion", "realm"}
)
_TRUNCATED = re.compile(r"^([A-Z][a-z]{2,4})\.$")  # "Colo.", "Calif.": as the extraction parser keeps them
_DIVIDED = frozenset({"democratic", "people", "peoples"})  # one of two states of a name
_MIN_CORE = 4  # letters: "Republic of Chad" is "Chad"; shorter cores are initials or fragments


@lru_cache(maxsize=4096)
def designated_core(name: str, entity_type: str) -> str | None:
    """The match key a designated place goes by alone ("malta" for "Republic of Malta"), else None."""
    if specific_type(entity_type) not in PLACE_TYPES or not capitalised_name(name):
        return None
    words = match_key(name, entity_type).split()
    while "of" in words[1:]:
        at = words.index("of", 1)
        if words[at - 1] not in _FORMS or _DIVIDED & set(words[:at]):
            return None
        words = words[at + 1 :]
        if words[:1] == ["the"]:
            words = words[1:]
        if len("".join(words)) < _MIN_CORE:
            return None
        if "of" not in words[1:]:
            return " ".join(words)
    return None


def truncated_letters(name: str, entity_type: str) -> str | None:
    """The letters a place's name cut short keeps ("colo" for "Colo."), else None."""
    found = _TRUNCATED.match(name.strip())
    return found.group(1).lower() if found and specific_type(entity_type) in PLACE_TYPES else None


def truncations(name: str, entity_type: str) -> list[str]:
    """The keys this one-word place's name has cut short ("col.", "colo.", ... for "Colorado")."""
    words = match_key(name, entity_type).split()
    if specific_type(entity_type) not in PLACE_TYPES or len(words) != 1 or not words[0].isalpha():
        return []
    return [words[0][:i] + "." for i in range(3, len(words[0]) - 2)]  # three letters cut at least: not "Niger."


def truncates(short: str, full: str, full_type: str) -> bool:
    """`short` ("Colo.") is `full` ("Colorado") cut short."""
    letters = truncated_letters(short, full_type)
    return letters is not None and f"{letters}." in truncations(full, full_type) and capitalised_name(full)


def dotted_initials(name: str, entity_type: str) -> str | None:
    """ "n.c." for the place "North Carolina" (two words or more, each capitalised), else None."""
    words = name.split()
    if specific_type(entity_type) not in PLACE_TYPES or len(words) < 2 or not capitalised_name(name):
        return None
    if not all(w[:1].isupper() for w in words):
        return None
    return "".join(f"{w[0]}." for w in words).lower()

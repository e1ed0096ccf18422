"""A country's name and its designation (pure): "Malta" / "Republic of Malta", "Israel" / "State of Israel",
"Venezuela" / "Bolivarian Republic of Venezuela" — one state, written with or without its form of government.

A place written "<words> <form of government> of [the] <core>" ("Kingdom of the Netherlands") is designated,
and its core ("netherlands") is the name the same state goes by alone. The forms are those of one sovereign
state (republic, kingdom, state, principality, ...): "City of London", "Port of Varga" or "University of Malta"
name something else than the place after "of". Only the short name joins the designated one, never two
designations of one core ("Republic of the Congo" / "Democratic Republic of the Congo" are two states), and the
resolver accepts it only when exactly one designated place of the project has that core.
"""

from __future__ import annotations

from functools import lru_cache

from app.domain.name_matching import match_key, specific_type
from app.domain.name_shapes import capitalised_name
from app.domain.name_spellings import PLACE_TYPES

_FORMS = frozenset(
    {"republic", "kingdom", "state", "commonwealth", "federation", "principality", "sultanate", "emirate", "duchy"}
    | {"confederation", "union", "dominion", "realm"}
)
_MIN_CORE = 4  # letters: "Republic of Chad" is "Chad"; shorter cores are initials or fragments


@lru_cache(maxsize=4096)
def designated_core(name: str, entity_type: str) -> str | None:
    """The match key a designated place goes by alone ("malta" for "Republic of Malta"), else None."""
    if specific_type(entity_type) not in PLACE_TYPES or not capitalised_name(name):
        return None
    words = match_key(name, entity_type).split()
    while "of" in words[1:]:
        at = words.index("of", 1)
        if words[at - 1] not in _FORMS:
            return None
        words = words[at + 1 :]
        if words[:1] == ["the"]:
            words = words[1:]
        if len("".join(words)) < _MIN_CORE:
            return None
        if "of" not in words[1:]:
            return " ".join(words)
    return None


"""US states' written abbreviations (pure): conventions, not shapes. "Mo." is Missouri and "R.I." Rhode Island
however their letters read: "Mo." has the first and last letters of "Mexico", "R.I." the initials of "Republic of
India", "Colo." the first letters of "Colombia", "Ind." those of "India", and a rule reading a form by its letters
alone would join it to whichever of those the project holds when it comes.

So such a form joins its state or nothing (`foreign_reading`): another entity is no candidate for it, and a rule's
decision or absorption taking it there is dropped, whatever the order the documents come in. The list puts no
merge in by itself: a form joins its state only by the rules that read its letters (most are the state's name cut
short or contracted, or its initials), so "Mo." and "Missouri" stay two nodes. Taking the other entity out of the
candidates may leave the state as the one fit, though ("N.C." beside "New Caledonia" and "North Carolina").

The forms are the Associated Press's and the Government Printing Office's, with periods: without them, "GA" or
"IN" are as often acronyms or words ("General Assembly", "in").
"""

from __future__ import annotations

from app.domain.names import entity_key

_STATES: dict[str, tuple[str, ...]] = {
    "alabama": ("ala.",),
    "arizona": ("ariz.",),
    "arkansas": ("ark.",),
    "california": ("calif.", "cal."),
    "colorado": ("colo.",),
    "connecticut": ("conn.",),
    "delaware": ("del.",),
    "florida": ("fla.",),
    "georgia": ("ga.",),
    "illinois": ("ill.",),
    "indiana": ("ind.",),
    "kansas": ("kan.", "kans."),
    "kentucky": ("ky.",),
    "louisiana": ("la.",),
    "maryland": ("md.",),
    "massachusetts": ("mass.",),
    "michigan": ("mich.",),
    "minnesota": ("minn.",),
    "mississippi": ("miss.",),
    "missouri": ("mo.",),
    "montana": ("mont.",),
    "nebraska": ("neb.", "nebr."),
    "nevada": ("nev.",),
    "new hampshire": ("n.h.",),
    "new jersey": ("n.j.",),
    "new mexico": ("n.m.", "n.mex."),
    "new york": ("n.y.",),
    "north carolina": ("n.c.",),
    "north dakota": ("n.d.", "n.dak."),
    "oklahoma": ("okla.",),
    "oregon": ("ore.", "oreg."),
    "pennsylvania": ("pa.", "penn."),
    "rhode island": ("r.i.",),
    "south carolina": ("s.c.",),
    "south dakota": ("s.d.", "s.dak."),
    "tennessee": ("tenn.",),
    "texas": ("tex.",),
    "vermont": ("vt.",),
    "virginia": ("va.",),
    "washington": ("wash.",),
    "west virginia": ("w.va.", "w.v."),
    "wisconsin": ("wis.", "wisc."),
    "wyoming": ("wyo.",),
}
_STATE_OF = {form: state for state, forms in _STATES.items() for form in forms}


def state_of(name: str) -> str | None:
    """The state (its name, lower case) whose abbreviation `name` is ("Mo.", "N. Dak."), else None."""
    if "." not in name:  # most names: asked of every candidate pair, so answered before any string is built
        return None
    return _STATE_OF.get("".join(name.split()).casefold())


def foreign_reading(name: str, target_key: str) -> bool:
    """Whether joining the form `name` to the entity `target_key` (a key: its name folded) reads a state's
    abbreviation as another entity."""
    state = state_of(name)
    return state is not None and target_key.casefold() != state


def kept_apart(a: str, b: str) -> bool:
    """Whether one of two names is a state's abbreviation and the other is not that state (names, not keys)."""
    return any((state := state_of(form)) is not None and entity_key(other) != state for form, other in ((a, b), (b, a)))

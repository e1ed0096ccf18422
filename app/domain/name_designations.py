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
A designation may also be made of the name's adjective ("Syrian Arab Republic" / "Syria", "Togolese Republic" /
"Togo", "Lebanese Republic" / "Lebanon", "Italian Republic" / "Italy", `adjectival_cores`), or of the name of its
people, from which the country's name is made with a place suffix ("Slovak Republic" / "Slovakia", "Kyrgyz
Republic" / "Kyrgyzstan"); but not a bare "-n" adjective before the form: "Dominican Republic" is not Dominica;
and a place of two words or more goes on with "of ..." ("United States" / "United States of America").

A place's name cut short with a period ("Colo." / "Colorado", "Calif." / "California") is the one place of the
project whose one-word name starts with those letters (three to five, and three letters cut at least: "Mt.",
"St." are words of their own, "Niger." is no cut of "Nigeria").
A contraction keeps the first letter or two and the last ("Vt." / "Vermont", "Fla." / "Florida", "Ky." /
"Kentucky": the way "Dr." and "Ltd." are written), again of exactly one one-word place of the project; "St.",
"Mt." and "Ft." are words of their own. Across documents a place is found by its contractions through index rows
(`contraction_rows`), as no key range holds both "vt." and "vermont".
Its initials written with periods ("N.C." / "North Carolina") are one too, even for two words: the periods say
each letter is a word cut short, unlike "US" or "EU", which are words of their own.
So is a place of two words written with its initial and its last word cut short or contracted ("W.Va." / "West
Virginia", "N.Dak." / "North Dakota"), found through the row of its dotted initials ("w.v.").
"""

from __future__ import annotations

import re
from functools import lru_cache

from app.domain.everyday_words import is_everyday_word
from app.domain.name_matching import match_key, specific_type
from app.domain.name_shapes import capitalised_name
from app.domain.name_spellings import PLACE_TYPES, SLOTS

_FORMS = frozenset(
    {"republic", "kingdom", "state", "commonwealth", "federation", "principality", "sultanate", "emirate", "duchy"}
    | {"confederation", "union", "dominion", "realm"}
)
_TRUNCATED = re.compile(r"^([A-Z][a-z]{1,4})\.$")  # "Colo.", "Calif.", "Vt.": as the extraction parser keeps them
_OWN_WORDS = frozenset({"st", "mt", "ft", "pt"})  # Saint, Mount, Fort, Point
_DIVIDED = frozenset({"democratic", "people", "peoples"})  # one of two states of a name
_DOTTED = re.compile(r"^[A-Z]\.\s?[A-Z][a-z]{1,4}\.$")  # "W.Va.", "N. Dak.": each word cut with a period
_DOTTED_WORDS = 2
_MIN_CORE = 4  # letters: "Republic of Chad" is "Chad"; shorter cores are initials or fragments
_DEMONYM_ENDINGS = ("n", "an", "ian", "ese", "lese", "i", "ic", "ish")  # "Syria-n", "Togo-lese", "Rwand(a)-ese"
_OWN_DEMONYMS = frozenset({"ese", "lese"})  # endings only a people's adjective has
# what "-ese" takes the place of at the end of a name: nothing ("Gabon-ese"), its last vowel ("Malt(a)-ese"), or its
# last vowel and an "n" ("Leban(on)-ese")
_BEFORE_ESE = ("", "a", "e", "o", "an", "en", "on")
# an adjective ending that takes the place of the name's own ending ("Ital(y)-ian", "Argent(ina)-ine"): unlike a
# bare "-n" ("Dominica-n"), the name is not the adjective cut short
_REPLACED_ENDINGS = (("ian", "y"), ("ine", "ina"))
_PLACE_SUFFIXES = ("ia", "stan", "istan")  # a country named after its people: "Slovak-ia", "Kyrgyz-stan"
_MIN_PEOPLE = 5  # letters: "Arab", "Serb", "Kurd", "Turk" name peoples of several lands or regions


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


@lru_cache(maxsize=65536)  # asked of every name of every index and by each short name's candidates
def designated_cores(name: str, entity_type: str) -> tuple[str, ...]:
    """The match keys a designated place may go by alone: `designated_core` ("malta" for "Republic of Malta"), or
    the name its first word is an adjective of ("syria" for "Syrian Arab Republic", "togo" for "Togolese
    Republic"; `adjectival_cores`)."""
    found = tuple(c for c in (designated_core(name, entity_type), _head_core(name, entity_type)) if c is not None)
    return found or adjectival_cores(name, entity_type)


@lru_cache(maxsize=4096)
def _head_core(name: str, entity_type: str) -> str | None:
    """A place of two words or more that goes on with "of ..." ("United States of America", "United Kingdom of
    Great Britain and Northern Ireland"): the words before "of" ("united states", "united kingdom"), a name of its
    own; never a "Democratic" or "People's" one."""
    if specific_type(entity_type) not in PLACE_TYPES or not capitalised_name(name):
        return None
    words = match_key(name, entity_type).split()
    at = words.index("of") if "of" in words else 0
    if at < 2 or _DIVIDED & set(words) or at == len(words) - 1:
        return None
    return " ".join(words[:at])


@lru_cache(maxsize=4096)
def adjectival_cores(name: str, entity_type: str) -> tuple[str, ...]:
    """A place written "<adjective> [<words>] <form of government>" ("Syrian Arab Republic", "Togolese Republic"):
    the names the adjective is made from by a demonym's ending ("syria", "togo"), four letters or more. A bare "-n"
    or "-i" adjective before the form alone is no designation: "Dominican Republic" is not Dominica's, as a state
    is often named after a region or a city, so that shape needs a word between ("Syrian Arab Republic") or an
    ending only demonyms have ("-ese", taking the place of the name's last vowel, and an "n" after it: "Lebanese"),
    or an ending that takes the place of the name's own ("Italian" / "Italy"). A people's name of five letters or
    more, with no adjective's ending, before the form alone is the country named after that people with a place
    suffix ("Slovak Republic" / "Slovakia"). A "Democratic" or "People's" designation is left out, as above."""
    if specific_type(entity_type) not in PLACE_TYPES or not capitalised_name(name):
        return ()
    words = match_key(name, entity_type).split()
    if len(words) < 2 or words[-1] not in _FORMS or "of" in words or _DIVIDED & set(words):
        return ()
    first = words[0]
    cores = []
    for ending in _DEMONYM_ENDINGS:
        core = first[: -len(ending)]
        if first.endswith(ending) and len(core) + 1 >= _MIN_CORE and (len(words) > 2 or ending in _OWN_DEMONYMS):
            cores += [core + tail for tail in (_BEFORE_ESE if ending == "ese" else ("",))]
    cores += [first[: -len(ending)] + own for ending, own in _REPLACED_ENDINGS if first.endswith(ending)]
    if len(words) == 2 and _people_name(first):
        cores += [first + suffix for suffix in _PLACE_SUFFIXES]
    return tuple(dict.fromkeys(c for c in cores if len(c) >= _MIN_CORE))


def adjective_prefixes(word: str) -> list[str]:
    """Where designations made of a one-word place's adjective or people's name begin (the key `word` and what
    `adjectival_cores` reads back to it): "syria" for "Syrian Arab Republic", "italian" for "Italy", "lebanese"
    for "Lebanon", "slovak" for "Slovakia"."""
    found = [word]
    found += [word[: -len(own)] + ending for ending, own in _REPLACED_ENDINGS if word.endswith(own)]
    found += [word[: len(word) - len(tail)] + "ese" for tail in _BEFORE_ESE if tail and word.endswith(tail)]
    # the people's name alone too: a place of that name keeps its designation from the one made with a suffix
    found += [p for suffix in _PLACE_SUFFIXES if word.endswith(suffix) and _people_name(p := word[: -len(suffix)])]
    return sorted({f for f in found if len(f) >= _MIN_CORE})


def people_word(name: str, entity_type: str) -> str | None:
    """The word of a designation made of a people's name ("slovak" for "Slovak Republic"), else None. When a
    place of the project goes by that word alone, the designation may be that place's ("Niger Republic" is
    Niger, not Nigeria): the resolver then leaves it apart from the name with a suffix."""
    words = match_key(name, entity_type).split()
    if len(words) != 2 or not _people_name(words[0]) or not adjectival_cores(name, entity_type):
        return None
    return words[0]


def _people_name(word: str) -> bool:
    """A word that may be a people's name a country is named after: five letters or more, no adjective's ending
    ("Dominican", "Argentine", "Hellenic"), no everyday word ("Federal", "United", "Socialist")."""
    return (
        len(word) >= _MIN_PEOPLE
        and word.isalpha()
        and not word.endswith((*_DEMONYM_ENDINGS, "ine", "al", "ist", "ed"))
        and not is_everyday_word(word)
    )


def truncated_letters(name: str, entity_type: str) -> str | None:
    """The letters a place's name cut short or contracted keeps ("colo" for "Colo.", "vt" for "Vt."), else None."""
    found = _TRUNCATED.match(name.strip())
    if not found or specific_type(entity_type) not in PLACE_TYPES or found.group(1).lower() in _OWN_WORDS:
        return None
    return found.group(1).lower()


def _one_word(name: str, entity_type: str) -> str | None:
    words = match_key(name, entity_type).split()
    if specific_type(entity_type) not in PLACE_TYPES or len(words) != 1 or not words[0].isalpha():
        return None
    return words[0]


def truncations(name: str, entity_type: str) -> list[str]:
    """The keys this one-word place's name has cut short ("col.", "colo.", ... for "Colorado")."""
    word = _one_word(name, entity_type)
    return [word[:i] + "." for i in range(3, len(word) - 2)] if word else []  # three letters cut at least: not "Niger."


def contractions(name: str, entity_type: str) -> list[str]:
    """The keys this one-word place's name has contracted: its first letter or two and its last ("vt.", "vet." for
    "Vermont"), for a name of five letters or more."""
    word = _one_word(name, entity_type)
    if not word or len(word) < 5:
        return []
    return sorted({f"{word[:k]}{word[-1]}." for k in (1, 2)} - {f"{w}." for w in _OWN_WORDS})


def contraction_rows(name: str, entity_type: str) -> list[str]:
    """The index rows (without their prefix) of a place's contractions, `SLOTS` per contraction; for a name written
    contracted ("Vt."), the rows of those letters, to read. A place of two words is recorded under its
    dotted initials ("w.v." for "West Virginia"), where a name of its words cut short ("W.Va.") reads."""
    if (letters := truncated_letters(name, entity_type)) is not None:
        cut = [f"{letters}."]
    elif (parts := dotted_parts(name, entity_type)) is not None:
        cut = ["".join(f"{p[0]}." for p in parts)]
    else:
        cut = contractions(name, entity_type)
        if (dotted := dotted_initials(name, entity_type)) is not None and dotted.count(".") <= _DOTTED_WORDS:
            cut.append(dotted)
    return [f"\x1dcut {c}#{i}" for c in cut for i in range(SLOTS)]


def dotted_parts(name: str, entity_type: str) -> list[str] | None:
    """The letters of a place's name of two words each cut short with a period, the last by more than its
    initial ("w", "va" for "W.Va."; "n", "dak" for "N. Dak."), else None ("N.C." is dotted initials)."""
    if specific_type(entity_type) not in PLACE_TYPES or not _DOTTED.match(name.strip()):
        return None
    parts = [p.strip().lower() for p in name.strip().rstrip(".").split(".")]
    return parts if all(len(p) == 1 for p in parts[:-1]) and len(parts[-1]) > 1 else None


def _cut_forms(word: str, entity_type: str) -> list[str]:
    """A word of a place's name as it may be cut short: its initial, or cut or contracted as a one-word name."""
    return [word[:1]] + [c.rstrip(".") for c in truncations(word, entity_type) + contractions(word, entity_type)]


def dotted_cuts(name: str, entity_type: str) -> list[str]:
    """The keys of a place of two words cut short word by word ("w.va.", "w. va.", "w.vir." ... for "West
    Virginia"): its initials, the last word cut or contracted as a one-word place is."""
    if (dotted := dotted_initials(name, entity_type)) is None or dotted.count(".") > _DOTTED_WORDS:
        return []
    words = match_key(name, entity_type).split()
    if len(words) != dotted.count("."):
        return []
    forms = [[w[:1]] for w in words[:-1]] + [_cut_forms(words[-1], entity_type)]
    found = [""]
    for options in forms:
        found = [f"{head}{cut}." for head in found for cut in options]
    cuts = [f for f in found if f != dotted]
    return cuts + [f.replace(".", ". ").strip() for f in cuts]


def dotted_cut(short: str, full: str, full_type: str) -> bool:
    """`short` ("W.Va.") is `full` ("West Virginia", or its key "west virginia") cut short word by word."""
    parts = dotted_parts(short, full_type)
    words = match_key(full, full_type).split()
    if parts is None or len(parts) != len(words) or not (capitalised_name(full) or full.islower()):
        return False
    return all(p == w[:1] for p, w in zip(parts[:-1], words, strict=False)) and parts[-1] in _cut_forms(
        words[-1], full_type
    )


def truncates(short: str, full: str, full_type: str) -> bool:
    """`short` ("Colo.", "Vt.") is `full` ("Colorado", "Vermont") cut short or contracted. `full` may be a key read
    from an index row ("vermont")."""
    letters = truncated_letters(short, full_type)
    if letters is None or not (capitalised_name(full) or full.islower()):
        return False
    return f"{letters}." in truncations(full, full_type) + contractions(full, full_type)


def dotted_initials(name: str, entity_type: str) -> str | None:
    """ "n.c." for the place "North Carolina" (two words or more, each capitalised), else None."""
    words = name.split()
    if specific_type(entity_type) not in PLACE_TYPES or len(words) < 2 or not capitalised_name(name):
        return None
    if not all(w[:1].isupper() for w in words):
        return None
    return "".join(f"{w[0]}." for w in words).lower()

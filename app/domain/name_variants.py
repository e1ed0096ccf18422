"""Name forms that reach across documents (pure): inversions, a root or surname alone, near-identical spellings,
and the confusable guard every such candidate must pass.

These rules propose candidates; the resolver (app/domain/cross_document.py) accepts one only when exactly one
entity of a compatible type fits. The guard keeps apart names that share words but differ in a word that
distinguishes them: two first names ("Naseem Khan" / "Imran Khan"), a different last word ("Acme Holdings" /
"Acme Holding Group"), another head noun ("Port of Varga" / "Varga Airport").
"""

from __future__ import annotations

import re

from app.domain.name_matching import acronym_letters, fold, is_acronym, is_person, titled, tokens
from app.domain.name_nicknames import nickname_pair
from app.domain.name_spellings import phonetic_key, spelling_variant
from app.domain.name_words import TITLES
from app.domain.names import entity_key
from app.domain.state_abbreviations import kept_apart

# First words that name a kind of thing, not one thing: never a root on their own.
_GENERIC_ROOTS = frozenset(
    {
        "the",
        "a",
        "an",
        "port",
        "bank",
        "university",
        "college",
        "school",
        "city",
        "county",
        "state",
        "republic",
        "kingdom",
        "national",
        "international",
        "royal",
        "new",
        "old",
        "north",
        "south",
        "east",
        "west",
        "central",
        "great",
        "first",
        "united",
        "general",
        "global",
        "saint",
        "st",
        "lake",
        "mount",
        "river",
        "treaty",
        "battle",
        "siege",
        "crisis",
        "valley",
        "office",
        "board",
        "council",
        "ministry",
        "department",
    }
)
_MIN_ROOT = 4  # "Ace" alone is too short to stand for "Ace Logistics"
_YEAR = re.compile(r"^(1[0-9]|20)[0-9]{2}$")
FUZZY_THRESHOLD = 0.6  # trigram similarity of the whole match keys


def inverted_forms(match: str) -> list[str]:
    """The match key written the other way round: "treaty of lisbon" ↔ "lisbon treaty" (one head word)."""
    words = match.split()
    if 3 <= len(words) <= 5 and words[1] == "of" and "of" not in words[2:] and words[0] not in ("a", "an", "the"):
        return [" ".join([*words[2:], words[0]])]
    if 2 <= len(words) <= 4 and "of" not in words and "the" not in words and not words[-1].isdigit():
        return [f"{words[-1]} of {' '.join(words[:-1])}"]
    return []


def lone_word(name: str, entity_type: str) -> str | None:
    """The single identifying word of a name written alone ("Siemens", "Dr. Okafor" → "okafor"), else None. A
    word joined by hyphens is one word as written: its parts, folded, with spaces ("Rolls-Royce" → "rolls royce",
    "Dr. Smith-Jones" → "smith jones"; `hyphened_word`)."""
    if is_acronym(name):
        return None
    words = tokens(name, entity_type if is_person(entity_type) else "person")
    if len(words) > 1 and (joined := hyphened_word(name)) is not None and joined.split() == words:
        words = [joined]
    # "Prof. Rao", "Mrs. Ma": a title says it is a surname, and so does a person's type ("Hu", "Eze"); a short
    # word of no type may be anything
    shortest = 2 if titled(name) or is_person(entity_type) else _MIN_ROOT
    if len(words) != 1 or len(words[0]) < shortest or not words[0].replace(" ", "").isalpha():
        return None
    if words[0].split()[0] in _GENERIC_ROOTS:
        return None
    return words[0]


def hyphened_word(name: str) -> str | None:
    """The parts of a name's one written word joined by hyphens, after any title, folded and spaced ("rolls royce"
    for "Rolls-Royce", "smith jones" for "Dr. Smith-Jones"), each part two letters or more; else None."""
    written = name.split()
    while len(written) > 1 and fold(written[0]) in TITLES:
        written = written[1:]
    if len(written) != 1 or "-" not in written[0]:
        return None
    parts = fold(written[0]).split()
    return " ".join(parts) if len(parts) >= 2 and all(len(p) >= 2 and p.isalpha() for p in parts) else None


def written_ends(name: str, entity_type: str) -> list[str]:
    """A name's first word (a thing's) or last word (a person's) as written when hyphens join it ("rolls-royce" for
    "Rolls-Royce Holdings plc", "smith-jones" for "Mary Smith-Jones"): the key a node of that word alone has, which
    no range of its root or surname ("rolls", "jones") reaches."""
    written = entity_key(name).split()
    if len(written) < 2:
        return []
    word = written[-1] if is_person(entity_type) else written[0]
    word = word.strip(".,;:")
    return [word] if "-" in word and hyphened_word(word) is not None else []


def root_of(name: str, entity_type: str) -> str | None:
    """The distinctive first word of a name of several words that is not a person's ("siemens" for "Siemens
    Healthineers AG"), else None."""
    if is_person(entity_type):
        return None
    words = tokens(name, entity_type)
    if len(words) < 2 or len(words[0]) < _MIN_ROOT or words[0] in _GENERIC_ROOTS or not words[0].isalpha():
        return None
    return words[0]


def surname_of(name: str) -> str | None:
    """The last word of a person's full name ("okafor" for "Ngozi Okafor"), else None."""
    words = tokens(name, "person")
    return words[-1] if len(words) >= 2 and len(words[-1]) >= 2 else None  # "Zhiwei Ma"


def _trigrams(word: str) -> set[str]:
    padded = f"  {word} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def similarity(a: str, b: str) -> float:
    """Trigram similarity of two strings (pg_trgm's measure: shared trigrams over all trigrams)."""
    ta, tb = _trigrams(a), _trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta or tb else 1.0


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (short words only)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def near_spelling(a: str, b: str) -> bool:
    """Two match keys spelling one name slightly differently ("kowalski freight linez" / "kowalski freight
    lines"): as many words, the first the same, one other word one typing slip away (two for long words),
    and the whole keys trigram-similar. Holding/Holdings-style pairs stay apart (see `confusable`)."""
    wa, wb = a.split(), b.split()
    if a == b or len(wa) != len(wb) or len(wa) < 2 or wa[0] != wb[0]:
        return False
    differing = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
    if len(differing) != 1:
        return False
    x, y = differing[0]
    shortest = min(len(x), len(y))
    allowed = 2 if shortest >= 9 else 1 if shortest >= 5 else 0
    return _edits(x, y) <= allowed and similarity(a, b) >= FUZZY_THRESHOLD


def confusable(a: str, a_type: str, b: str, b_type: str) -> bool:
    """True when the two names must stay apart whatever else matches (module docstring)."""
    if kept_apart(a, b):  # "Mo." / "Mexico"
        return True
    person = is_person(a_type) or is_person(b_type)
    wa, wb = tokens(a, "person" if person else a_type), tokens(b, "person" if person else b_type)
    if person:
        if len(wa) >= 2 and len(wb) >= 2:
            fa, fb = wa[0], wb[0]
            initial = (len(fa) == 1 and fb.startswith(fa)) or (len(fb) == 1 and fa.startswith(fb))
            # "Yevgeny Kuznetsov" / "Evgeny Kouznetsov": one name; "Catherine" / "Katherine Garrity": two people
            spelt = phonetic_key(a, "person") == phonetic_key(b, "person") is not None
            # "Bill Hale" / "William Hale", "Emeka Okoye" / "Chukwuemeka Okoye": a given name and its short form
            return fa != fb and not initial and not spelt and not nickname_pair(fa, fb)
        return False
    if len(wa) < 2 or len(wb) < 2:
        return False
    if sorted(wa) == sorted(wb) or " ".join(wb) in inverted_forms(" ".join(wa)):
        return False
    if len(wa) != len(wb):
        return True
    # same length, one word different: apart unless it is a near spelling of the other (not a new word)
    if spelling_variant(a, a_type, b, b_type):  # "Nizhny Novgorod" / "Nizhni Novgorod": one name spelt otherwise
        return False
    return not near_spelling(" ".join(wa), " ".join(wb)) or _grade_of_organisation(wa, wb)


def _grade_of_organisation(wa: list[str], wb: list[str]) -> bool:
    """ "holding" / "holdings", "energy" / "energies": a plural marks another company of the group."""
    return any(x != y and (x.rstrip("s") == y.rstrip("s") or x[:-1] == y[:-3]) for x, y in zip(wa, wb, strict=True))


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def compact_key(match: str) -> str | None:
    """The letters of a thing's match key without spaces and with its last word in the singular: "Solar-Edge",
    "SolarEdge" and "Solar Edge" are "solaredge", "Norwell Laboratories" and "Norwell Laboratory" are
    "norwelllaboratory". Joining or hyphenating a compound and the number of the head word are writers' habits;
    None when too short to say anything (under six letters)."""
    words = match.split()
    if not words:
        return None
    joined = "".join([*words[:-1], _singular(words[-1])])
    return joined if len(joined) >= 6 and joined.isalnum() else None


def extension_rule(short: str, long: str, product: bool) -> str | None:
    """How the match key `long` extends `short` when a writer drops that part of it: a year at the end ("osogbo
    summit" / "osogbo summit 2004") → "year"; partners' names without their firm's trade → "firm"; for a product,
    the maker's name in front ("aquasense pro 5" / "halvorsen aquasense pro 5", "aquasense" / "halvorsen
    aquasense pro 5") → "maker". Else None."""
    s, w = short.split(), long.split()
    if len(w) == len(s) + 1 and w[:-1] == s and _YEAR.match(w[-1]) and not any(_YEAR.match(x) for x in s):
        return "year" if len(s) >= 2 else None
    if len(s) == 3 and s[1] == "and" and w[:-1] == s and len(w) == 4 and not _YEAR.match(w[-1]):
        return "firm"  # partners' names without the firm's trade: "Lund & Baird" / "Lund and Baird Engineering"
    if product and len(w) > len(s) and w[1 : 1 + len(s)] == s:
        first = s[0]
        if len(first) >= _MIN_ROOT and first.isalpha() and first not in _GENERIC_ROOTS:
            return "maker"
    return None


def abbreviated_tail(a: str, b: str) -> bool:
    """One name's last words written as their acronym in the other: "High-Voltage DC" / "high-voltage direct
    current" (the same words before it, two or more words after it whose initials the acronym is)."""
    for short, long in ((a, b), (b, a)):
        written = short.split()
        if len(written) < 2 or not is_acronym(written[-1]):
            continue
        head, words, letters = fold(" ".join(written[:-1])).split(), fold(long).split(), acronym_letters(written[-1])
        rest = words[len(head) :]
        if (
            words[: len(head)] == head
            and len(rest) == len(letters) >= 2
            and "".join(w[0] for w in rest) == letters.lower()
        ):
            return True
    return False

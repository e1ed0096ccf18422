"""Name forms for entity resolution (pure): the match key two surface forms of one entity share, acronyms,
initials and acronym definitions read from text.

Precision first: the match key only drops what never distinguishes two entities — case, diacritics,
quotes, punctuation, a leading "the", a person's honorific or title, an organisation's legal-form suffix.
Words such as "Group" or "Holdings" stay: "Acme" and "Acme Holdings" may be parent and subsidiary.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from app.domain.name_words import DIMINUTIVES, LEGAL_SUFFIXES, TITLES
from app.domain.names import entity_key

PERSON_TYPES = frozenset({"person", "people", "individual", "character", "human"})
UNKNOWN_TYPES = frozenset({"", "unknown"})
GENERIC_TYPES = UNKNOWN_TYPES | {"other"}  # say nothing about what an entity is
_STOPWORDS = frozenset({"of", "for", "the", "and", "de", "du", "des", "la", "le", "der", "on", "in", "at", "to"})
# letters NFKD leaves whole: without this "Tromsø" and "Tromso" would not share a key
_STROKED = str.maketrans(
    {"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "ß": "ss"}
    | {"æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "TH"}
)
_POSSESSIVE = re.compile(r"['\u2019]s(?=\s|$)")
_ORDINALS = {
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
    "fourth": "4th",
    "fifth": "5th",
    "sixth": "6th",
    "seventh": "7th",
    "eighth": "8th",
    "ninth": "9th",
    "tenth": "10th",
}
# A numbered thing's Roman numeral after its name is its ordinal: "Basin Plan II" is the "Second Basin Plan", "World
# War I" the "First World War". Not "X" ("Model X" is a name) and not for products, whose letters are model names.
_ROMAN = {"i": "1st", "ii": "2nd", "iii": "3rd", "iv": "4th", "v": "5th", "vi": "6th", "vii": "7th", "viii": "8th"}
_NUMBERS = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8"}
_NUMBERED_KINDS = frozenset({"type", "class", "phase", "stage", "grade", "category", "schedule", "tier"})
GENERATIONS = frozenset({"jr", "sr", "ii", "iii", "iv"})  # a generation after a person's surname
_NAME_SUFFIXES = GENERATIONS | {"phd", "md", "esq", "dds", "obe", "mbe", "cbe", "kc", "qc"}  # and degrees, honours
_E_PREFIX = re.compile(r"\b[eE]-(?=[a-zA-Z]{3})")  # "e-health record" is an "electronic health record"
_PRODUCT_TYPES = frozenset({"artifact", "product", "device", "software", "model", "vehicle", "technology"})
_ABBREVIATED_HEADS = {"st": "saint", "mt": "mount", "ft": "fort"}  # "St. Ives", "Mt Pune"
_YEAR = re.compile(r"^(1[0-9]|20)[0-9]{2}$")
_HEAD_FIRST = frozenset({"river", "lake"})  # written before or after the name with one meaning
_QUOTES = re.compile("['\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00b4]")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_DROP = re.compile(r"[.()\[\]{}]")
_TO_SPACE = re.compile(r"[,;:!?/\\|_\u2010-\u2015-]")
_ACRONYM = re.compile(r"^(?:[A-Z][A-Z0-9&]{1,7}|(?:[A-Z]\.){2,8})$")
_TRAILING_PAREN = re.compile(r"^(.*\S)\s*\(([^()]+)\)$")
_WORD = r"[A-Z][\w'\u2019&.-]*"
_LONG_THEN_SHORT = re.compile(
    rf"((?:{_WORD}\s+(?:(?:of|for|the|and|de|on|in|&)\s+)*){{1,9}}{_WORD})\s*\(\s*([A-Z][A-Z0-9&.]{{1,9}})\s*\)"
)
# the same in lower case or one word: "follicular lymphoma (FL)", "gastrointestinal (GI)", "Ultrasound (US)"; a
# number may be one of the words: "type 2 diabetes (T2D)"
_ANY_THEN_SHORT = re.compile(
    r"((?:[A-Za-z0-9][\w'\u2019-]*\s+){0,9}[A-Za-z][\w'\u2019-]*)\s*\(\s*([A-Z][A-Z0-9&.]{1,9})\s*\)"
)
_SHORT_THEN_LONG = re.compile(r"\b([A-Z][A-Z0-9&]{1,7})\s*\(\s*([A-Z][^()]{2,120}?)\s*\)")
_NOT_BEFORE_PAREN = re.compile(r"[^\w'\u2019\s-]")  # no match of _ANY_THEN_SHORT holds one before its "("
_NOT_BEFORE_LONG = re.compile(r"[^\w'\u2019&.\s-]")  # nor of _LONG_THEN_SHORT


def is_person(entity_type: str) -> bool:
    return entity_type.lower() in PERSON_TYPES


def types_compatible(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a == b or a in UNKNOWN_TYPES or b in UNKNOWN_TYPES


@lru_cache(maxsize=4096)  # asked of every name of every index
def specific_type(entity_type: str) -> str | None:
    """The type in lower case when it says what the entity is, None for an empty or generic one."""
    first = entity_type.split(",")[0].strip().lower()
    return None if first in GENERIC_TYPES else first


def qualified_name(name: str, entity_type: str) -> str:
    """The name an entity gets when another entity of another type already holds its name: "Orlin (artifact)"."""
    return f"{name} ({entity_type.lower()})"


@lru_cache(maxsize=65536)  # names are folded again by every rule and every index built over them
def fold(text: str) -> str:
    """Case-folded, diacritics removed (letters with a stroke too: "Tromsø" → "tromso"), a possessive "'s"
    dropped, quotes dropped, punctuation to spaces, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_STROKED))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    plain = _QUOTES.sub("", _POSSESSIVE.sub("", plain.casefold()))
    plain = _DECIMAL_POINT.sub("\u2024", plain)  # "3.5" keeps its point; "S.A." becomes "sa"
    plain = _TO_SPACE.sub(" ", _DROP.sub("", plain)).replace("&", " and ")
    return " ".join(plain.replace("\u2024", ".").split())


def without_defined_acronym(name: str) -> tuple[str, str | None]:
    """("Kessara Research Institute", "KRI") for "Kessara Research Institute (KRI)"; a parenthesis that is
    not the initials of the name ("Mercury (planet)") stays part of it."""
    found = _TRAILING_PAREN.match(name.strip())
    if found and is_acronym(found.group(2)) and initials_match(found.group(1), found.group(2)):
        return found.group(1), acronym_letters(found.group(2))
    return name, None


def tokens(name: str, entity_type: str) -> list[str]:
    """The folded words that identify the entity (see the module docstring for what is dropped)."""
    return list(_tokens(name, entity_type))  # a new list each time: callers may change theirs


@lru_cache(maxsize=65536)
def _tokens(name: str, entity_type: str) -> tuple[str, ...]:
    name = without_defined_acronym(name)[0]
    if is_person(entity_type):
        name = given_names_first(name)
    words = fold(name if is_person(entity_type) else _E_PREFIX.sub("electronic ", name)).split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if is_person(entity_type):
        while len(words) > 2 and words[0] in TITLES:
            words = words[1:]
        if len(words) == 2 and words[0] in TITLES:  # "Dr. Tolven": the surname alone
            words = words[1:]
    else:
        while len(words) > 1 and (words[-1] in LEGAL_SUFFIXES or (words[-1] == "and" and len(words) > 2)):
            words = words[:-1]
        words = _ordered(words, numbered=entity_type.lower() not in _PRODUCT_TYPES)
    return tuple(words)


def given_names_first(name: str) -> str:
    """A person's name written family name first with a comma, as lists and bylines do ("Kariuki, A. K.",
    "Zhou, Meilin"), in the usual order ("A. K. Kariuki"); any other name as it is. Not when the part after the
    comma is a generational or degree suffix ("Hale, Jr.")."""
    parts = name.split(",")
    if len(parts) != 2:
        return name
    family, given = parts[0].split(), parts[1].split()
    if len(family) != 1 or not 1 <= len(given) <= 3 or any(fold(w) in _NAME_SUFFIXES for w in given):
        return name
    return f"{' '.join(given)} {family[0]}"


def titled(name: str) -> bool:
    """Written with a title or honorific before it: "Prof. Rao", "Mrs. Ma"."""
    words = fold(name).split()
    return len(words) >= 2 and words[0] in TITLES


def _ordered(words: list[str], *, numbered: bool = True) -> list[str]:
    """One writing of numbers and heads in a thing's name: "Fourth X" → "4th x", "St Ives" → "saint ives",
    a year first or after "of" written last ("2004 Guilin Conference", "Act of 1987" → "... 2004", "act 1987")."""
    if len(words) < 2:
        return words
    words = [_ORDINALS.get(w, w) for w in words]
    # "type II diabetes" is "type 2 diabetes", "Phase III trial" a "phase 3 trial": a numbered kind, not an ordinal
    words = [_NUMBERS.get(w, w) if i and words[i - 1] in _NUMBERED_KINDS else w for i, w in enumerate(words)]
    if numbered and words[-1] in _ROMAN:
        words = [_ROMAN[words[-1]], *words[:-1]]
    words[0] = _ABBREVIATED_HEADS.get(words[0], words[0])
    if len(words) == 2 and words[0] in _HEAD_FIRST:  # "River Nakuru" is the "Nakuru River"
        words = [words[1], words[0]]
    if _YEAR.match(words[0]):
        words = [*words[1:], words[0]]
    if len(words) > 2 and words[-2] == "of" and _YEAR.match(words[-1]):
        words = [*words[:-2], words[-1]]
    return words


@lru_cache(maxsize=65536)  # the rules ask for the keys of the same neighbourhood's names over and over
def match_key(name: str, entity_type: str) -> str:
    """What two surface forms of one entity share: "Acme Holdings Ltd." and "ACME HOLDINGS" → "acme holdings".
    A person's given name is read through its common diminutive ("Bob" → "robert") and a two-word name in
    either order is one ("ZHOU Meilin", "Meilin Zhou", "Zhou, Meilin": family name first is a habit of writers)."""
    words = tokens(name, entity_type)
    if is_person(entity_type) and len(words) >= 2:
        words = [DIMINUTIVES.get(words[0], words[0]), *words[1:]]
        if len(words) == 2:
            words = sorted(words)
    return " ".join(words) or entity_key(name)


def is_acronym(name: str) -> bool:
    return bool(_ACRONYM.match(name.strip()))


def acronym_letters(name: str) -> str:
    return name.strip().replace(".", "").upper()


_MIN_UNDEFINED_LETTERS = 3


def read_as_initials_alone(name: str) -> bool:
    """Whether an acronym no document defines may be read as the initials of a name only another document
    holds: three letters or more ("BIS"), or letters each cut short with a period ("N.C."). Two bare letters
    are too often something else ("BC" after a century is no "Brunswick County"; "US", "ER", "PM")."""
    return len(acronym_letters(name)) >= _MIN_UNDEFINED_LETTERS or "." in name


def _initials(words: list[str], *, with_stopwords: bool) -> str:
    return "".join(w[0] for w in words if with_stopwords or w not in _STOPWORDS).upper()


def initials_match(expansion: str, acronym: str) -> bool:
    """ "KRI" for "Kessara Research Institute"; "BoA"/"BA" for "Bank of America" (stop words optional); a company's
    legal form may be left out or not ("PTH" and "PTHL" for "Pethliar Textiles Holdings Ltd.")."""
    letters = acronym_letters(acronym)
    words = [w for w in fold(expansion).split() if w]
    if words and words[0] == "the":
        words = words[1:]
    if len(words) > 2 and _YEAR.match(words[-1]):  # "Clean Rivers Act 1991 (CRA)": an acronym leaves the year out
        words = words[:-1]
    readings = [words]
    if len(words) > 2 and words[-1] in LEGAL_SUFFIXES:
        readings.append(words[:-1])
    return any(
        len(read) >= 2 and letters in (_initials(read, with_stopwords=False), _initials(read, with_stopwords=True))
        for read in readings
    )


_LEGAL_FORM_AFTER = "(?: (?:" + "|".join(sorted(LEGAL_SUFFIXES)) + r")\.?)?"


def initials_pattern(acronym: str) -> tuple[str, str]:
    """(POSIX regex over entity keys, first letter) finding the names whose initials are the acronym; a company's
    legal form may follow the initials of three letters or more ("pth" finds "pethliar textiles holdings ltd.", as
    `initials_match` reads a definition; two letters are too common a pair to read past one more word)."""
    letters = acronym_letters(acronym).lower()
    stop = "(?:(?:of|for|the|and|de|du|des|la|le|der|on|in|at|to|&) )*"
    parts = [re.escape(ch) + r"[^ ]*" for ch in letters]  # a hyphen may join words or part them: "XRC", "x-ray ..."
    legal_form = _LEGAL_FORM_AFTER if len(letters) >= 3 else ""
    return "^(?:the )?" + ("[ -]" + stop).join(parts) + legal_form + "$", letters[0]


def _definition(long: str, short: str) -> tuple[str, str] | None:
    """The shortest tail of `long` whose initials are `short` (text before an acronym is often longer)."""
    words = long.split()
    for start in range(len(words) - 1, -1, -1):
        candidate = " ".join(words[start:])
        if initials_match(candidate, short):
            return acronym_letters(short), candidate
    return None


def _code_definition(long: str, short: str) -> tuple[str, str] | None:
    """A code of three letters or more made of a name's letters in order, the first starting the name, when the
    code is not its initials ("Panama (PAN)", "Gibraltar Pound (GIP)"; Schwartz & Hearst's rule), from the shortest
    tail of capitalised words; "Spain (ESP)" or "Uganda Shilling (UGX)" take letters the name lacks: undefined."""
    letters = acronym_letters(short).lower()
    words = long.split()
    if len(letters) < 3 or not letters.isalpha():
        return None
    named = 0
    for start in range(len(words) - 1, -1, -1):
        if start and words[start] in _STOPWORDS:  # "Trinidad and Tobago (TTO)": a joining word inside the name
            continue
        if not words[start][:1].isupper() or (named := named + 1) > len(letters):
            return None
        joined = fold("".join(w for w in words[start:] if w not in _STOPWORDS))
        rest = iter(joined[1:])
        if joined[:1] == letters[0] and all(ch in rest for ch in letters[1:]):
            return acronym_letters(short), " ".join(words[start:])
    return None


def _apposed_code(long: str, short: str) -> tuple[str, str] | None:
    """A code of three to five capital letters in parentheses right after a capitalised name, its letters not the
    name's ("Comorian Franc (KMF)", "Swiss Franc (CHF)"): the name's code only when the resolver finds both of one
    type that is not a person's, a place's or an organisation's (`apposition_fits`): after those a parenthesis
    often names another entity ("Jane Roe (MIT)", "Lyon (FRA)", "Acme (NYSE)")."""
    letters = acronym_letters(short)
    return (letters, long) if 3 <= len(letters) <= 5 and letters.isalpha() else None


def spelled_out(expansion: str, acronym: str) -> bool:
    """The acronym's letters come from the expansion (initials, a code of its letters, one word's letters)."""
    words = expansion.split()
    return bool(
        words
        and (
            _definition(expansion, acronym)
            or _code_definition(expansion, acronym)
            or _one_word_definition(words[-1], acronym)
        )
    )


def _one_word_definition(word: str, short: str) -> bool:
    """ "GI" for "gastrointestinal", "US" for "Ultrasound": the first letter, then the others in order."""
    letters, folded = acronym_letters(short).lower(), fold(word)
    if not letters.isalpha() or len(folded) < 2 * len(letters) or not folded.startswith(letters[0]):
        return False
    rest = iter(folded[1:])
    return all(ch in rest for ch in letters[1:])


@lru_cache(maxsize=1024)  # both readers below go over one document's texts in turn
def _found(pattern: re.Pattern[str], text: str) -> tuple[tuple[str, str], ...]:
    """pattern.findall(text) for the patterns above, each of which needs a parenthesis."""
    if "(" not in text:
        return ()
    if pattern is _ANY_THEN_SHORT:
        return _before_parentheses(_ANY_THEN_SHORT, _NOT_BEFORE_PAREN, text)
    if pattern is _LONG_THEN_SHORT:
        return _before_parentheses(_LONG_THEN_SHORT, _NOT_BEFORE_LONG, text)
    return tuple(pattern.findall(text))


def _before_parentheses(pattern: re.Pattern[str], outside: re.Pattern[str], text: str) -> tuple[tuple[str, str], ...]:
    """pattern.findall(text) for _ANY_THEN_SHORT or _LONG_THEN_SHORT, found without trying the pattern at every
    word of the text (most of the rules' Python time per document): a match starts in the run of characters
    `outside` does not find right before a "(" (word, space and joining characters) and ends at the first ")"
    after it, so only that run is searched, up to that ")"."""
    found = []
    floor = 0  # every match starting before it is found
    while (paren := text.find("(", floor)) >= 0 and (close := text.find(")", paren)) >= 0:
        other = outside.search(text[floor:paren][::-1])
        match = pattern.search(text, paren - other.start() if other else floor, close + 1)
        if match is not None:
            found.append((match.group(1), match.group(2)))
        floor = match.end() if match is not None else close + 1
    return tuple(found)


def _lower_case_definitions(text: str) -> Iterable[tuple[str, str]]:
    for long, short in _found(_ANY_THEN_SHORT, text):
        if (pair := _definition(long, short)) is not None:
            yield pair
        elif _one_word_definition(last := long.split()[-1], short):
            yield acronym_letters(short), last
        elif last[:1].isupper() and (pair := _code_definition(last, short)) is not None:  # "Niger (NER)"
            yield pair


def defined_acronyms(texts: Iterable[str]) -> set[str]:
    """Acronyms the texts define in any form (also two ways, or by one word): never to be guessed by initials."""
    found: set[str] = set()
    for text in texts:
        found |= {short for short, _ in _lower_case_definitions(text or "")}
        found |= {acronym_letters(short) for _, short in _found(_LONG_THEN_SHORT, text or "")}
        found |= {acronym_letters(short) for short, long in _found(_SHORT_THEN_LONG, text or "")}
    return found


def acronym_definitions(texts: Iterable[str]) -> dict[str, str]:
    """Acronym (upper-case letters) → the expansion the texts define for it, as written: "Kessara Research
    Institute (KRI)" or "KRI (Kessara Research Institute)", or a code after a name (`_apposed_code`) when nothing
    spells the code out. An acronym defined two ways is left out."""
    found: dict[str, set[str]] = {}
    apposed: dict[str, set[str]] = {}
    for text in texts:
        for long, short in _found(_LONG_THEN_SHORT, text or ""):
            if (pair := _definition(long, short) or _code_definition(long, short)) is not None:
                found.setdefault(pair[0], set()).add(pair[1])
            elif (pair := _apposed_code(long, short)) is not None:
                apposed.setdefault(pair[0], set()).add(pair[1])
        for acronym, expansion in _lower_case_definitions(text or ""):
            found.setdefault(acronym, set()).add(expansion)
        for short, long in _found(_SHORT_THEN_LONG, text or ""):
            if initials_match(long, short):
                found.setdefault(acronym_letters(short), set()).add(long.strip())
    out = {}
    for acronym, expansions in (apposed | found).items():
        distinct = {match_key(e, "organization") for e in expansions}
        if len(distinct) == 1:
            out[acronym] = sorted(expansions, key=len)[0]
    return out

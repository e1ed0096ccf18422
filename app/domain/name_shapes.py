"""What a name looks like (pure): a proper name, a person's name, or a common-noun phrase or list fragment.

Resolution rules written for names (a root alone, a partial person name) must not apply to the common-noun
compounds and noisy spans extractors also return: in "liver cancer" or "Kidney Cancer" the first word names
another thing, and an extractor's "person" type on "Nausea Vomiting Mouth" does not make it a person.
"""

from __future__ import annotations

import re
from functools import lru_cache

from app.domain.everyday_words import is_everyday_word
from app.domain.name_matching import fold, tokens

_LIST_MARKS = re.compile(r"[,;/|+\u2022\u00b7]|\s[-\u2013\u2014]\s")  # "uterus, cervix", "• Pembrolizumab"
_JOINERS = frozenset(
    {"of", "for", "the", "and", "de", "du", "des", "la", "le", "der", "von", "van", "da", "di", "del"}
    | {"bin", "ibn", "&"}
)
# "Network®", "Lite 4", "Østergaard": a capital of any alphabet
_NAME_WORD = re.compile(r"^(?:(?=[^\W\d_])[\w'\u2019.&-]+[\u00ae\u2122]?|\d[\w.]*)$")
# legal forms and organisation heads: "Siemens Healthineers AG", "Acme Holdings Inc."
_COMPANY_SUFFIXES = frozenset(
    {"inc", "ltd", "llc", "llp", "plc", "corp", "co", "gmbh", "ag", "sa", "nv", "bv", "oy", "spa", "pty", "limited"}
    | {"corporation", "incorporated", "company", "holdings", "group", "laboratories", "pharmaceuticals"}
)


def _name_word(word: str) -> bool:
    return bool(_NAME_WORD.match(word)) and (word[0].isupper() or word[0].isdigit())


def _words(name: str) -> list[str]:
    return name.split()


@lru_cache(maxsize=65536)  # asked of every name near a document by several rules, for each document
def capitalised_name(name: str) -> bool:
    """Every word but a joining one ("of", "de") starts with a capital letter or is a number ("Skyfold Lite 4"),
    the first a capital letter, and it is no list fragment. A leading article is not the name's ("the State of
    Eritrea", as writers and extractions keep it mid-sentence; the match key drops it too)."""
    words = _words(name)
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if not words or _LIST_MARKS.search(name):
        return False
    return all(_name_word(w) or w in _JOINERS for w in words) and words[0][:1].isupper()


def _company_suffixed(name: str) -> bool:
    words = fold(name).split()
    return len(words) >= 2 and words[-1] in _COMPANY_SUFFIXES and not _LIST_MARKS.search(name)


def proper_root(short: str, full: str) -> bool:
    """`short` alone may stand for `full` by its first word: both are proper names ("Siemens" / "Siemens
    Healthineers AG", "Lupron" / "Lupron Depot"), not a common-noun compound ("liver" / "liver cancer", "Health" /
    "Health Organization", "Eastern" / "Eastern Cooperative Oncology Group")."""
    words = _words(short)
    if len(words) != 1 or not _name_word(words[0]) or is_everyday_word(fold(short)):
        return False
    return capitalised_name(full) or _company_suffixed(full)


def person_name(name: str) -> bool:
    """Written like a person's name: capitalised words, no list fragment, not everyday words only ("Kidney
    Cancer", "Nausea Vomiting Mouth" are not; a lone word must not be an everyday word at all)."""
    if not capitalised_name(name) or any(ch.isdigit() for ch in name):
        return False
    words = tokens(name, "person")
    if not words or len(words) > 5:
        return False
    everyday = [is_everyday_word(w) for w in words]
    return not all(everyday) if len(words) > 1 else not everyday[0]

"""Spelling variants of one name (pure): transliterations and umlauts written out ("Yevgeny Kuznetsov" / "Evgeny
Kouznetsov", "Kharkiv" / "Kharkov", "Zürich" / "Zuerich") — one name as different writers spell its sounds.

People: two names are one person's name spelt otherwise when they have the same key
(app/domain/name_sounds.py): the given name's and the family name's (the words after the given name joined:
"al-Rashid" is "Alrashid") — each the word's phonetic code, first vowel sound and syllables, an established
English given name keeping its own spelling ("Catherine" / "Katherine", "Karen" / "Karin": two people). A key,
not a comparison of two names: "spelt otherwise" is then an equivalence, and a person's node is the same
whichever of its spellings a project reads first.

Places: the words joined have the same phonetic code (Metaphone, from `jellyfish`, after folding the letters
transliteration systems swap: q/k, kh/k, gh/g, w/v, ou/u, y/i, an initial y before a vowel) and stay close
letter by letter (Jaro-Winkler ≥ 0.8), with the same runs of consonants between their vowels: transliterations
change how a sound is written, not where the vowels stand ("Kharkov" / "Kharkiv"; "Krakow" / "Kharkov", one
phonetic code and 0.95 alike, are two cities). Renames ("Madras" / "Chennai", "Tiflis" / "Tbilisi") are not
spellings: they stay for the LLM judge, and nor is a word that goes on from the other by two letters or more
("Niger" / "Nigeria"): a name derived from it, not a spelling of it.

Only people and places: a product's or an organisation's spelling is its own. Across documents the candidates
come from phonetic index rows (`phonetic_slots`): each new entity is recorded under its phonetic key in the first
of a few free slots, so a later name reads every entity sharing its key and accepts exactly one that fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

import jellyfish

from app.domain.name_matching import is_acronym, is_person, specific_type, tokens
from app.domain.name_sounds import MIN_LETTERS, code, consonant_runs, family_key, given_key, plain

PLACE_TYPES = frozenset({"location", "place", "geo", "gpe", "city", "country", "region"})
SLOTS = 3  # entities recorded per phonetic key; a fourth is left out (ambiguous whatever it is)
_CLOSE = 0.8  # Jaro-Winkler of the folded words
_LETTERS = re.compile(r"[^a-z]")


def _kind(entity_type: str) -> str | None:
    """ "person", "place" or None (not a kind spelt by sound)."""
    if is_person(entity_type):
        return "person"
    return "place" if specific_type(entity_type) in PLACE_TYPES else None


def _words(name: str, kind: str) -> list[str] | None:
    """The words compared: a person's given name and the rest joined, a place's words joined."""
    if is_acronym(name):
        return None
    words = [_LETTERS.sub("", w) for w in tokens(name, "person" if kind == "person" else "location")]
    words = [w for w in words if w]
    if kind == "person":
        if len(words) < 2 or any(len(w) < 2 for w in words):  # initials are another rule's
            return None
        return [words[0], "".join(words[1:])]
    return ["".join(words)] if words else None


@lru_cache(maxsize=4096)
def phonetic_key(name: str, entity_type: str) -> str | None:
    """What every spelling of the name shares ("person AFJN-E3 KSNTSF-O3"), None when no such rule applies."""
    kind = _kind(entity_type)
    words = _words(name, kind) if kind else None
    if not words:
        return None
    if kind == "person":
        given, family = given_key(words[0]), family_key(words[1:])
        return f"person {given} {family}" if given and family else None
    return None if len(words[0]) < MIN_LETTERS else f"place {code(words[0])}"


def _same_place_word(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) < MIN_LETTERS or code(a) != code(b):
        return False
    if (a.startswith(b) or b.startswith(a)) and abs(len(a) - len(b)) >= 2:  # "Niger" / "Nigeria": a derived name
        return False
    if consonant_runs(a) != consonant_runs(b):  # a vowel moved across a consonant: "Krakow" / "Kharkov"
        return False
    return jellyfish.jaro_winkler_similarity(plain(a), plain(b)) >= _CLOSE


def spelling_variant(a: str, a_type: str, b: str, b_type: str) -> bool:
    """True when the two names are one name spelt two ways (module docstring); False for the same spelling."""
    kind = _kind(a_type)
    if kind is None or kind != _kind(b_type):
        return False
    if kind == "person":  # an equivalence: the nodes do not depend on which spelling came first
        same = tokens(a, "person") == tokens(b, "person")  # "al-Rashid" / "Alrashid" differ, as the exact rules see
        return not same and phonetic_key(a, a_type) == phonetic_key(b, b_type) is not None
    wa, wb = _words(a, kind), _words(b, kind)
    return bool(wa and wb and wa != wb and _same_place_word(wa[0], wb[0]))


def phonetic_slots(name: str, entity_type: str) -> list[str]:
    """The index rows an entity of this name may be recorded under (the caller prefixes them), none when no
    phonetic key applies."""
    key = phonetic_key(name, entity_type)
    return [f"\x1dspelt {key}#{i}" for i in range(SLOTS)] if key else []


def spelt_candidates(name: str, entity_type: str, pool: Mapping[str, tuple[str, str]], exclude: str) -> set[str]:
    """The keys of `pool` (key → (name, type)) whose name is a spelling variant of this one."""
    key = phonetic_key(name, entity_type)
    if key is None:
        return set()
    return {
        k
        for k, (other, other_type) in pool.items()
        if k != exclude
        and phonetic_key(other, other_type) == key
        and spelling_variant(name, entity_type, other, other_type)
    }


def phonetic_index(
    names: Mapping[str, tuple[str, str]],
    stored: Mapping[str, str],
    prefix: str,
    rows: Callable[[str, str], list[str]] = phonetic_slots,
) -> dict[str, str]:
    """Index row → entity key for the entities among `names` (key → (name, type)) no slot holds yet, each in the
    first free slot of each of its keys; `stored`: the rows read (prefix + slot → entity key); `rows`: a name's
    slots, in groups of `SLOTS`."""
    taken = {s: t for n, ty in names.values() for s in rows(n, ty) if (t := stored.get(prefix + s))}
    out: dict[str, str] = {}
    for key, (name, entity_type) in sorted(names.items()):
        slots = rows(name, entity_type)
        for group in (slots[i : i + SLOTS] for i in range(0, len(slots), SLOTS)):
            if key in {taken.get(s) for s in group}:
                continue
            if (free := next((s for s in group if s not in taken), None)) is not None:
                taken[free] = key
                out[prefix + free] = key
    return out

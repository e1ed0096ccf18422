"""Spelling variants of one name (pure): transliterations and umlauts written out ("Yevgeny Kuznetsov" / "Evgeny
Kouznetsov", "Kharkiv" / "Kharkov", "Zürich" / "Zuerich") — one name as different writers spell its sounds.

Two names are spelling variants when they have as many words (a person's given name, then the rest of the name
joined: "al-Rashid" is "Alrashid"; a place's words joined) and every pair of words that differ (each of at least
four letters) has the same phonetic key (Metaphone, from `jellyfish`, after folding the letters transliteration
systems swap: q/k, kh/k, gh/g, w/v, ou/u, y/i, an initial y before a vowel) and stays close letter by letter
(Jaro-Winkler ≥ 0.8). A given name ending in "a" beside one that does not ("Maria" / "Mario") names another person,
and so does a given name one written vowel away ("Frances" / "Francis", "Marian" / "Marion", "Karin" / "Karen",
"Ernest" / "Ernst"): Latin-script given names are a stock of names that often differ by one vowel, while a
transliteration of one name differs in more places or in the letters systems swap ("Muhammad" / "Mohammed",
"Qassim" / "Kassem", "Yuri" / "Iouri"). One-vowel transliterations ("Ahmad" / "Ahmed") are left to the LLM judge.
A given name spelt otherwise beside the rest of the name spelt the same ("Catherine Garrity" / "Katherine Garrity")
is not taken for a transliteration either (two people of one family may bear two spellings of one given name),
unless the given names differ by a mark of romanisation English spelling does not make: an initial "Y" before a
vowel ("Yevgeny" / "Evgeny"), "iou", "kh", "q", a final "iy" ("Dmitriy" / "Dmitri"), "ks" for "x".
Renames ("Madras" / "Chennai", "Tiflis" / "Tbilisi") are not spellings: they stay for the LLM judge, and nor is
a word that goes on from the other by two letters or more ("Niger" / "Nigeria", "Georg" / "Georgia"): a name
derived from it, not a spelling of it.

Only people and places: a product's or an organisation's spelling is its own. Across documents the candidates
come from phonetic index rows (`phonetic_slots`): each new entity is recorded under its phonetic key in the first
of a few free slots, so a later name reads every entity sharing its key and accepts exactly one that fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

import jellyfish

from app.domain.name_matching import fold, is_acronym, is_person, specific_type, tokens

PLACE_TYPES = frozenset({"location", "place", "geo", "gpe", "city", "country", "region"})
SLOTS = 3  # entities recorded per phonetic key; a fourth is left out (ambiguous whatever it is)
_MIN_LETTERS = 4  # "Li" / "Lee", "Wang Li" / "Wang Lei": too short to tell a spelling from another name
_CLOSE = 0.8  # Jaro-Winkler of the folded words
# French "Iouri Kouznetsov" is "Yuri Kuznetsov", German "Wolkowa" is "Volkova", "Zuerich" is "Zürich"
_SWAPS = [("iou", "yu"), ("ou", "u"), ("kh", "k"), ("gh", "g"), ("dh", "d"), ("q", "k"), ("w", "v")]
_SWAPS += [("ae", "a"), ("oe", "o"), ("ue", "u")]
_INITIAL_Y = re.compile(r"^y(?=[aeiou])")  # "Yevgeny" / "Evgeny", "Yuri" / "Iouri": a glide before the vowel
_INNER_Y = re.compile(r"(?<=.)y")  # "Dostoyevsky" / "Dostoevsky", "Nizhny" / "Nizhni": a vowel inside a word
_LETTERS = re.compile(r"[^a-z]")
_VOWELS = frozenset("aeiou")
_ROMANISED = tuple(re.compile(p) for p in (r"^y[aeiou]", "iou", "kh", "q", "iy$", "ks"))


def _kind(entity_type: str) -> str | None:
    """ "person", "place" or None (not a kind spelt by sound)."""
    if is_person(entity_type):
        return "person"
    return "place" if specific_type(entity_type) in PLACE_TYPES else None


def _plain(word: str) -> str:
    """The word's letters as transliteration systems agree on them: "kouznetsov" stays, "kharkov" → "karkov"."""
    word = _LETTERS.sub("", word)
    for written, said in _SWAPS:
        word = word.replace(written, said)
    return _INNER_Y.sub("i", _INITIAL_Y.sub("", word))


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


def _code(word: str) -> str:
    """Metaphone keeps a leading vowel as written: any leading vowel is one sound here ("Iouri" / "Yuri")."""
    code = str(jellyfish.metaphone(_plain(word))).upper()
    return "A" + code[1:] if code[:1] in ("A", "E", "I", "O", "U") else code


@lru_cache(maxsize=4096)
def phonetic_key(name: str, entity_type: str) -> str | None:
    """What every spelling variant of the name shares ("person YFJN KSNTSF"), None when no such rule applies."""
    kind = _kind(entity_type)
    words = _words(name, kind) if kind else None
    if not words or any(len(w) < _MIN_LETTERS for w in words[-1:]):
        return None
    return f"{kind} " + " ".join(_code(w) if len(w) >= _MIN_LETTERS else w for w in words)


def _one_vowel_apart(a: str, b: str) -> bool:
    """One written vowel swapped, added or dropped: "frances" / "francis", "ernest" / "ernst"."""
    if len(a) == len(b):
        diffs = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        return len(diffs) == 1 and diffs[0][0] in _VOWELS and diffs[0][1] in _VOWELS
    short, long = sorted((a, b), key=len)
    if len(long) != len(short) + 1:
        return False
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return long[i] in _VOWELS and long[:i] + long[i + 1 :] == short


def _same_word(a: str, b: str, *, given_name: bool) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) < _MIN_LETTERS or _code(a) != _code(b):
        return False
    if given_name and (a[-1] == "a") != (b[-1] == "a"):  # "Maria" / "Mario": another person
        return False
    if given_name and any(_one_vowel_apart(x, y) for x, y in ((a, b), (a.replace("x", "ks"), b.replace("x", "ks")))):
        return False  # "Frances" / "Francis", "Aleksandr" / "Alexander": another given name
    if (a.startswith(b) or b.startswith(a)) and abs(len(a) - len(b)) >= 2:  # "Niger" / "Nigeria": a derived name
        return False
    return jellyfish.jaro_winkler_similarity(_plain(a), _plain(b)) >= _CLOSE


def spelling_variant(a: str, a_type: str, b: str, b_type: str) -> bool:
    """True when the two names are one name spelt two ways (module docstring); False for the same spelling."""
    kind = _kind(a_type)
    if kind is None or kind != _kind(b_type):
        return False
    wa, wb = _words(a, kind), _words(b, kind)
    if not wa or not wb or len(wa) != len(wb) or wa == wb:
        return False
    if kind == "person" and wa[0] != wb[0] and family_spelt_alike(a, b) and not romanised_apart(wa[0], wb[0]):
        return False  # two relatives, maybe
    return all(
        _same_word(x, y, given_name=kind == "person" and i == 0) for i, (x, y) in enumerate(zip(wa, wb, strict=True))
    )


def family_spelt_alike(a: str, b: str) -> bool:
    """The words after a person's given name are written the same way ("al-Rashid" is not "Alrashid")."""
    return tokens(a, "person")[1:] == tokens(b, "person")[1:]


def romanised_apart(a: str, b: str) -> bool:
    """The two given names differ by a mark of romanisation (module docstring): "Yuriy" / "Yuri", "Qasim" / "Kasim"."""
    a, b = fold(a), fold(b)
    return any(bool(mark.search(a)) != bool(mark.search(b)) for mark in _ROMANISED)


def same_given_name(a: str, b: str) -> bool:
    """Two given names one person may be written with ("Yevgeny" / "Evgeny"), for the confusable guard."""
    return _same_word(fold(a), fold(b), given_name=True)


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

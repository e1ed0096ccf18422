"""One key per way a person's name sounds (pure): every spelling of one name gets the same key, so that "spelt
otherwise" is an equivalence and a person's node does not depend on which spelling a project read first
("Dmitriy" / "Dmitri" / "Dmitry", "Qassim" / "Kassem" / "Qasim", "Husayn" / "Hussein" / "Hussain").

A word sounds as its Metaphone code (from `jellyfish`, after folding the letters transliteration systems swap)
and its vowel sounds, doubled letters aside ("Haddad" / "Hadad"), each vowel sound read as a, e/i/y or o/u
("ai" and "ei" are one: "Husayn" / "Hussein"). A given name keeps every vowel sound ("Meilin" / "Meilan": two
names) and whether it ends in -a ("Maria" / "Mario"); a family name keeps its first vowel sound and how many it
has, as transliterations of it differ in the later ones ("Gorbachev" / "Gorbachov", "Tarawneh" / "Tarawna").

English spellings are given names of their own: a given name of the US Census (1990, shipped by the `names`
package), or one that sounds like one, keeps its spelling as its key ("Catherine" / "Katherine", "Alan" /
"Allan", "Karen" / "Karin", "Terri" / "Terry": each may be another person's). A spelling with a mark of
romanisation English spelling does not make (an initial "Y" before a vowel, "iou", "kh", "q", a final "iy",
"ks") is read as the one census name whose letters it transliterates ("Yelena", "Aleksandra", "Yuriy" →
"Elena", "Alexandra", "Yuri"). So only names English does not spell are keyed by their sound. The cost:
transliterations that English spells too ("Mohammed" / "Mohamed" / "Muhammad", "Ahmad" / "Ahmed") are left to
the LLM judge.

A family name of one syllable ("Khan", "Wang") says too little about whose name it is: no key, so the rules
want the name spelt alike. Words under four letters are compared as written ("Li" / "Lee").
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources

import jellyfish

MIN_LETTERS = 4  # "Li" / "Lee", "Wang Li" / "Wang Lei": too short to tell a spelling from another name
# French "Iouri Kouznetsov" is "Yuri Kuznetsov", German "Wolkowa" is "Volkova", "Zuerich" is "Zürich"
_SWAPS = [("iou", "yu"), ("ou", "u"), ("kh", "k"), ("gh", "g"), ("dh", "d"), ("q", "k"), ("w", "v"), ("x", "ks")]
_SWAPS += [("ae", "a"), ("oe", "o"), ("ue", "u")]
_INITIAL_Y = re.compile(r"^y(?=[aeiou])")  # "Yevgeny" / "Evgeny", "Yuri" / "Iouri": a glide before the vowel
_INNER_Y = re.compile(r"(?<=.)y")  # "Dostoyevsky" / "Dostoevsky", "Nizhny" / "Nizhni": a vowel inside a word
_NOT_LETTER = re.compile(r"[^a-z]")
_VOWEL_SOUNDS = re.compile(r"[aeiouy]+")
_DOUBLED = re.compile(r"(.)\1+")
_ROMANISED = tuple(re.compile(p) for p in (r"^y[aeiou]", "iou", "kh", "q", "iy$", "ks"))
_CENSUS_FILES = ("dist.male.first", "dist.female.first")


def plain(word: str) -> str:
    """The word's letters as transliteration systems agree on them: "kouznetsov" stays, "kharkov" → "karkov"."""
    word = _NOT_LETTER.sub("", word)
    for written, said in _SWAPS:
        word = word.replace(written, said)
    return _INNER_Y.sub("i", _INITIAL_Y.sub("", word))


def code(word: str) -> str:
    """Metaphone keeps a leading vowel as written: any leading vowel is one sound here ("Iouri" / "Yuri")."""
    found = str(jellyfish.metaphone(plain(word))).upper()
    return "A" + found[1:] if found[:1] in ("A", "E", "I", "O", "U") else found


def _vowel(sound: str) -> str:
    if sound[0] == "a" and sound[1:2] in ("i", "y"):  # "Husayn" / "Hussein", "Haidar" / "Heidar"
        return "E"
    return "A" if sound[0] == "a" else "O" if sound[0] in "ou" else "E"


def _sounded(word: str) -> str:
    """The word's letters as transliterated (`plain`), a doubled letter once ("Haddad" / "Hadad")."""
    return _DOUBLED.sub(r"\1", plain(word))


def _vowels(word: str) -> list[str]:
    return [_vowel(s) for s in _VOWEL_SOUNDS.findall(_sounded(word))]


def consonant_runs(word: str) -> list[str]:
    """The word's runs of consonants between its vowel sounds, each as it sounds: "kharkiv" → K, RK, F."""
    return [str(jellyfish.metaphone(run)).upper() for run in _VOWEL_SOUNDS.split(_sounded(word)) if run]


@lru_cache(maxsize=65536)
def _given_sound(word: str) -> str | None:
    """ "TMTR-EE" for "dmitriy", "dmitri" and "dmitry"; None for a word without a vowel."""
    vowels = _vowels(word)
    return f"{code(word)}-{''.join(vowels)}{'a' if word.endswith('a') else ''}" if vowels else None


@cache
def _census() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(the census given names without a mark of romanisation, their sounds, letters as transliterated (`plain`)
    → the one such census name with those letters)."""
    names: set[str] = set()
    package = resources.files("names")
    for file in _CENSUS_FILES:
        names |= {line.split()[0].lower() for line in package.joinpath(file).read_text().splitlines() if line.strip()}
    english = {n for n in names if not _romanised(n)}
    by_letters: dict[str, set[str]] = {}
    for name in english:
        by_letters.setdefault(plain(name), set()).add(name)
    sounds = frozenset(s for n in english if (s := _given_sound(n)) is not None)
    return frozenset(english), sounds, {k: next(iter(v)) for k, v in by_letters.items() if len(v) == 1}


def load_name_lists() -> None:
    """Read the census list now (about 0.15 s), so that a process's first document does not wait for it."""
    _census()


def census_given_name(word: str) -> bool:
    """A folded word the US Census lists as a given name (spelt as English spells it)."""
    return word in _census()[0]


def _romanised(word: str) -> bool:
    return any(mark.search(word) for mark in _ROMANISED)


def given_key(word: str) -> str | None:
    """The key of a folded given name (module docstring); the word itself when short."""
    if len(word) < MIN_LETTERS:
        return word
    english, sounds, by_letters = _census()
    if word not in english and _romanised(word) and (listed := by_letters.get(plain(word))) is not None:
        word = listed  # "Yelena" is "Elena", "Aleksandra" "Alexandra"
    sound = _given_sound(word)
    return "=" + word if word in english or sound in sounds else sound


def family_key(words: list[str]) -> str | None:
    """The key of a person's folded name after the given name, joined ("al-Rashid" is "alrashid"); None when
    it is short or of one syllable."""
    joined = "".join(words)
    vowels = _vowels(joined) if len(joined) >= MIN_LETTERS else []
    return f"{code(joined)}-{vowels[0]}{len(vowels)}" if len(vowels) >= 2 else None

"""The names near a document indexed by the words the cross-document rules look up (pure)."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from app.domain.name_designations import designated_cores
from app.domain.name_matching import is_acronym, is_person, match_key, specific_type
from app.domain.name_spellings import phonetic_key
from app.domain.name_variants import compact_key, root_of, surname_of

Nearby = dict[str, tuple[str, str]]  # entity key → (display name, type)


class _Entry(NamedTuple):
    """Where one (name, type) goes in an index: the same for that name in every index built over it."""

    acronym: bool
    kind: str | None
    sound: str | None
    tailed: bool
    surname: str | None
    root: str | None
    compact: str | None
    cores: tuple[str, ...]
    head: str | None  # the match key without its last word, for a name of three words or more
    second: str | None  # the match key's second word


@lru_cache(maxsize=65536)  # an index is built per document (and again by its final pass) over names that recur
def _entry(name: str, etype: str) -> _Entry:
    if is_acronym(name):  # only its letters, for a writing that joins them otherwise ("TELENOVA")
        compact = None if is_person(etype) else compact_key(match_key(name, etype))
        return _Entry(True, None, None, False, None, None, compact, (), None, None)
    person = is_person(etype)
    words = match_key(name, etype).split()
    return _Entry(
        acronym=False,
        kind=specific_type(etype),
        sound=phonetic_key(name, etype),
        tailed=len(written := name.split()) >= 2 and is_acronym(written[-1]),
        surname=surname_of(name) if person else None,
        root=None if person else root_of(name, etype),
        compact=None if person else compact_key(match_key(name, etype)),
        cores=() if person else tuple(designated_cores(name, etype)),
        head=" ".join(words[:-1]) if len(words) >= 3 else None,
        second=words[1] if len(words) >= 2 else None,
    )


class NameIndex:
    """Names by surname (people) and by root (other things), built once per document: each rule then looks up
    one word instead of reading every name."""

    def sounding(self, name: str, entity_type: str) -> Nearby:
        """The names of the same phonetic key as this one."""
        sound = phonetic_key(name, entity_type)
        return {k: self.names[k] for k in self.sounds.get(sound, ())} if sound else {}

    def __init__(self, names: Nearby) -> None:
        self.names = names
        self.surnames: dict[str, set[str]] = {}
        self.roots: dict[str, set[str]] = {}
        self.compact: dict[str, set[str]] = {}
        self.sounds: dict[str, set[str]] = {}  # phonetic key → names (app/domain/name_spellings.py)
        self.tailed: set[str] = set()  # names whose last word is an acronym ("High-Voltage DC")
        # (specific type, match key without its last word) → names not acronyms: "osogbo summit 2004" under
        # "osogbo summit", for the year or firm a writer leaves out (cross_document.py::extension_candidates)
        self.heads: dict[tuple[str | None, str], set[str]] = {}
        # (specific type, second word of the match key) → names not acronyms: "halvorsen aquasense pro 5" under
        # "aquasense", for the maker a writer leaves out
        self.seconds: dict[tuple[str | None, str], set[str]] = {}
        self.cores: dict[str, set[str]] = {}  # "malta" → "republic of malta" (app/domain/name_designations.py)
        for key, (name, etype) in names.items():
            entry = _entry(name, etype)
            if entry.compact is not None:
                self.compact.setdefault(entry.compact, set()).add(key)
            if entry.acronym:
                continue
            if entry.head is not None:
                self.heads.setdefault((entry.kind, entry.head), set()).add(key)
            if entry.second is not None:
                self.seconds.setdefault((entry.kind, entry.second), set()).add(key)
            if entry.sound is not None:
                self.sounds.setdefault(entry.sound, set()).add(key)
            if entry.tailed:
                self.tailed.add(key)
            if entry.surname is not None:
                self.surnames.setdefault(entry.surname, set()).add(key)
            if entry.root is not None:
                self.roots.setdefault(entry.root, set()).add(key)
            for core in entry.cores:
                self.cores.setdefault(core, set()).add(key)

"""A code written in parentheses after a name whose letters it does not take ("Comorian Franc (KMF)", "Swiss Franc
(CHF)"; app/domain/name_matching.py::acronym_definitions reads them, and `code_definitions` adds those after a
name of one word, "Gold (XAU)"): which words before it are the name, and when the resolver may take the code for
the name's."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from app.domain.name_matching import (
    PERSON_TYPES,
    acronym_definitions,
    defined_acronyms,
    fold,
    is_acronym,
    match_key,
    specific_type,
    spelled_out,
    tokens,
)
from app.domain.name_spellings import PLACE_TYPES

# One capitalised word, not an acronym, then a code of three to five capitals in parentheses: "Gold (XAU)". The
# word before it (if any) is checked by `_one_word_codes`: a capitalised one makes the name longer than one word.
_ONE_WORD_THEN_CODE = re.compile(r"(?<![\w'\u2019&.-])([A-Z][a-z][\w'\u2019-]*)\s*\(\s*([A-Z]{3,5})\s*\)")
_WORD_BEFORE = re.compile(r"([\w'\u2019&.-]+)\s*$")
_SPACES = re.compile(r"\s*")
_WINDOW = 64  # characters before a code read for the word before it (more only when spaces or the word fill them)
_CODE = re.compile(r"\(\s*([A-Z]{3,5})\s*\)")


def expansion_forms(expansion: str, acronym: str) -> list[str]:
    """The names an acronym's expansion may be, longest first: itself when it spells the acronym out, else it and
    its shorter tails (a code's name may follow other capitalised words: "Importers Swiss Franc (CHF)")."""
    words = expansion.split()
    return [expansion] if spelled_out(expansion, acronym) else [" ".join(words[i:]) for i in range(len(words))]


_NOT_BY_APPOSITION = PLACE_TYPES | PERSON_TYPES | {"organization", "organisation", "company", "institution"}


def acronym_fits(expansion: str, acronym: str, acronym_type: str, name_type: str) -> bool:
    """The acronym may stand for the name its expansion reached: it spells the expansion out, or it is a code after
    it ("Comorian Franc (KMF)", "Gold (XAU)") and both are of one specific type that is not a person's, a place's or
    an organisation's (name_matching.py::_apposed_code)."""
    kind = specific_type(acronym_type)
    if spelled_out(expansion, acronym):
        return True
    return kind is not None and kind == specific_type(name_type) and kind not in _NOT_BY_APPOSITION


def _one_word_codes(text: str) -> Iterable[tuple[str, str]]:
    """(code, word) for each code in parentheses right after a name of one word: at the start of a sentence or
    after a word in lower case ("prices of Gold (XAU) rose"), never after another capitalised word ("Swiss Franc
    (CHF)" is the two-word rule's), and not a code spelled out by the word ("Norway (NOR)" is defined already)."""
    if "(" not in text:
        return
    for found in _ONE_WORD_THEN_CODE.finditer(text):
        word, code = found.group(1), found.group(2)
        before = _word_before(text, found.start())
        after_sentence = _last_visible(text, found.start()) in ".!?;:"
        if before is not None and before.group(1)[:1].isupper() and not after_sentence:
            continue
        if not spelled_out(word, code):
            yield code, word


def _word_before(text: str, end: int) -> re.Match[str] | None:
    """_WORD_BEFORE.search(text[:end]), read over the last characters before `end` only: searched over the whole
    text before each code, the pattern was tried at every word. The window's answer is the whole text's unless the
    word, or the spaces, reach back to the window's start; then the whole text before `end` is searched."""
    start = max(end - _WINDOW, 0)
    found = _WORD_BEFORE.search(text, start, end)
    if start == 0 or (found is not None and found.start() > start):
        return found
    if found is None and not _SPACES.fullmatch(text, start, end):  # what ends the text before `end` is no word's
        return None
    return _WORD_BEFORE.search(text, 0, end)


def _last_visible(text: str, end: int) -> str:
    """text[:end].rstrip()[-1:], without copying the text before `end`."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return text[end - 1 : end]


def code_definitions(texts: Collection[str], names: Iterable[str]) -> dict[str, str]:
    """acronym_definitions(texts), plus codes after a name of one word ("Gold (XAU)") when that is safe: the word
    is a name of the document, no other name of the document holds it among its words ("Franc" beside "Swiss
    Franc"), it is the only name the texts put before the code, and the code is defined nowhere else in the texts
    (a code defined two ways is no one's: a longer name defining it otherwise drops it too). The types are
    checked by `acronym_fits` when the code is resolved."""
    all_names = list(names)
    out = acronym_definitions(texts)
    elsewhere = defined_acronyms(texts)
    _named_before_codes(texts, all_names, out, elsewhere)
    words: dict[str, set[str]] = {}
    for text in texts:
        for code, word in _one_word_codes(text or ""):
            words.setdefault(code, set()).add(word)
    if not words:
        return out
    keys = {match_key(n, "organization") for n in all_names}
    for code, found in words.items():
        one = len({match_key(w, "organization") for w in found}) == 1
        if code in out:  # defined by a longer name too: one definition only if that name ends with the word
            if not one or fold(out[code]).split()[-1:] != [fold(min(found, key=len))]:
                del out[code]
            continue
        if code in elsewhere or not one:
            continue
        word = min(found, key=len)
        folded = fold(word)
        holders = [n for n in all_names if len(tokens(n, "organization")) > 1 and folded in tokens(n, "organization")]
        if match_key(word, "organization") in keys and not holders:
            out[code] = word
    return out


def _names_before(text: str, long_names: list[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    """(code, key of the longest name written right before it) for each code in parentheses that follows one of
    `long_names` ((folded name, key) pairs) word for word: "lithium iron phosphate (LFP)"."""
    for found in _CODE.finditer(text):
        before = fold(text[max(found.start() - 240, 0) : found.start()]).rstrip()
        fits = [(n, k) for n, k in long_names if before.endswith(n) and not before[-len(n) - 1 : -len(n)].isalnum()]
        if fits:
            yield found.group(1), max(fits, key=lambda f: len(f[0]))[1]


def _named_before_codes(texts: Collection[str], names: list[str], out: dict[str, str], defined: set[str]) -> None:
    """The document's own definition "X (ABC)" when X is one of its names of two words or more, written right
    before the code, the same name wherever the code is: the code stands for that name even when its letters are
    not the name's initials ("lithium iron phosphate (LFP)") or spell out only its tail ("New Israeli Sheqel (ILS)"
    read as "Israeli Sheqel" by the letters alone). A code the texts define otherwise keeps its reading, and the
    resolver still checks the types when the name does not spell the code (`acronym_fits`). `defined`: the
    acronyms the texts define in any form."""
    long_names = [(fold(n), match_key(n, "organization")) for n in names if len(n.split()) > 1 and not is_acronym(n)]
    if not long_names or not any("(" in (t or "") for t in texts):
        return
    shown = {match_key(n, "organization"): n for n in names}
    before: dict[str, set[str]] = {}
    for text in texts:
        for code, key in _names_before(text or "", long_names):
            before.setdefault(code, set()).add(key)
    for code, keys in before.items():
        if len(keys) != 1:
            continue
        name = shown[next(iter(keys))]
        current = out.get(code)
        if current is None and code not in defined:
            out[code] = name
        elif current is not None and match_key(current, "organization") not in shown:
            ours, theirs = fold(name).split(), fold(current).split()
            # the letters spell a tail of the name ("Israeli Sheqel"), or the code was read after a longer run of
            # capitalised words it does not spell ("Importers Swiss Franc")
            if ours[-len(theirs) :] == theirs or (theirs[-len(ours) :] == ours and not spelled_out(current, code)):
                out[code] = name

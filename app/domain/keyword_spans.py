"""The names a keyword may hold: a keyword extracted from a question is often two names joined ("Exies or
Circus Diablo"), a name with a possessive ("Grace Krilanovich's") or a name inside a phrase ("the album
Aenima"). Its contiguous word spans, longest first, are looked up as entity keys, so each name it holds
can seed the search even when the whole keyword names nothing.
"""

from __future__ import annotations

import re

from app.domain.names import entity_key

MAX_WORDS = 8  # longer keywords are phrases, not names: only their first MAX_WORDS words are split
# Words that never make a name alone (a span of only these is skipped; they may sit inside a longer name)
_GLUE = frozenset(
    {"a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "by", "with", "from", "as", "is"}
    | {"was", "are", "were", "be", "which", "who", "what", "when", "where", "that", "this", "these", "its"}
)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_EDGE_PUNCT = "\"“”‘’'()[],.;:!?"


def _words(keyword: str) -> list[str]:
    out = []
    for raw in keyword.split():
        word = _POSSESSIVE.sub("", raw.strip(_EDGE_PUNCT))
        if word:
            out.append(word)
    return out[:MAX_WORDS]


def keyword_spans(keyword: str) -> list[str]:
    """Entity keys of the keyword's word spans (possessives and edge punctuation stripped), longest first and
    left to right; a span that starts or ends with a glue word, or a single word under 3 letters, is left out.
    The whole keyword (as cleaned) comes first."""
    words = _words(keyword)
    out: dict[str, None] = {}
    for length in range(len(words), 0, -1):
        for start in range(len(words) - length + 1):
            span = words[start : start + length]
            first, last = span[0].casefold(), span[-1].casefold()
            if first in _GLUE or last in _GLUE or (length == 1 and len(span[0]) < 3):
                continue
            out.setdefault(entity_key(" ".join(span)), None)
    return list(out)


def held_names(keyword: str, known: set[str]) -> list[str]:
    """The keys in `known` the keyword's spans name, longest first, without a span inside one already taken
    ("Circus Diablo" found, "Diablo" is not added)."""
    words = [entity_key(w) for w in _words(keyword)]
    taken: list[tuple[int, int]] = []
    out: list[str] = []
    for length in range(len(words), 0, -1):
        for start in range(len(words) - length + 1):
            key = " ".join(words[start : start + length])
            if key not in known or key in out:
                continue
            if any(s <= start and start + length <= e for s, e in taken):
                continue
            taken.append((start, start + length))
            out.append(key)
    return out

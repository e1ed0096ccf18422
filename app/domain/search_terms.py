"""Words for full-text search: the repository ORs them (a question rarely repeats every word of a text),
so ranking, not matching, decides what comes first."""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TERMS = 48  # a long query contributes its first words only: every term is one more index probe
_WORD = re.compile(r"\w+", re.UNICODE)


def search_terms(texts: Iterable[str], max_terms: int = MAX_TERMS) -> list[str]:
    """Distinct lower-cased words of `texts`, in order of appearance (digits and letters, no punctuation)."""
    out: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text or ""):
            word = word.casefold().strip("_")
            if word and word not in out:
                out[word] = None
                if len(out) >= max_terms:
                    return list(out)
    return list(out)

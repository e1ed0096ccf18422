"""Answer coverage without a judge: the share of a reference answer's content words and numbers found in the
returned context. Words are lowercased, stopwords and question words dropped, simple plurals folded
("arteries" → "artery", "cells" → "cell"); numbers keep their decimals ("2.5", "50")."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[a-z]+(?:'[a-z]+)?")
_QUESTION_WORDS = "what which who whom whose when where why how"
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())
_STOPWORDS = """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either etc few for from further had has
    have having he her here hers herself him himself his i if in into is it its itself just may me might more
    most must my myself no nor not now of off on once only or other ought our ours ourselves out over own per
    same shall she should so some such than that the their theirs them themselves then there these they this
    those through thus to too under until up upon us very via was we were while will with within without would
    yet you your yours yourself yourselves 's s t one ones often usually typically include includes including
    including such well many much like"""
STOPWORDS = frozenset(_STOPWORDS.split())


def fold(word: str) -> str:
    """A crude singular: enough to match "tumors" with "tumor" and "therapies" with "therapy"."""
    if word[0].isdigit() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> set[str]:
    """Content words (folded) and numbers of a text."""
    out = set()
    for token in _TOKEN.findall(text.lower().replace("'s ", " ")):
        token = token.replace(",", "") if token[0].isdigit() else token
        if token in STOPWORDS or token in QUESTION_WORDS:
            continue
        out.add(fold(token))
    return out


def coverage(answer: str, context: str | set[str]) -> float | None:
    """Share of the answer's terms present in the context; None when the answer has no content word."""
    wanted = terms(answer)
    if not wanted:
        return None
    have = context if isinstance(context, set) else terms(context)
    return len(wanted & have) / len(wanted)


def mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def share_at_least(values: Iterable[float | None], threshold: float = 0.8) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(v >= threshold for v in kept) / len(kept) if kept else None


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

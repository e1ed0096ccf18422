"""The check of one claim against the context: which passages support it, and how well.

Passages are ranked by lexical overlap (the claim's content words a passage holds, and its facts: numbers,
dates, names), blended with the embedding similarity of claim and passage when there is one; the chunks the
claim's markers name get a small head start. The best passage is cited, then others that add a missing name
or words, are themselves close to the claim and share a fact with what is already cited (so two unrelated
sentences cannot be stitched together to support an invented combination). The claim's numbers and dates
must all come from the first passage: a number found only in another sentence about the same entity does not
count; nor does a name found elsewhere when the first passage names someone the claim does not (the claim
swapped a name). A fact of the claim found in none of the cited passages makes it unsupported; otherwise the share of
its content words the passages hold decides supported or partial.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from app.domain.claim_support import Passage, content_words, facts

Support = Literal["supported", "partial", "unsupported"]

SUPPORTED_COVERAGE = 0.6
SUPPORTED_WITH_SIMILARITY = (0.45, 0.85)  # coverage, similarity: a paraphrase the embedding vouches for
PARTIAL_COVERAGE = 0.3
FIRST_PASSAGE_MIN = 0.25  # share of the claim's words the first cited passage must hold
MORE_PASSAGE_MIN = 0.5  # … and every further one
MAX_CITATIONS = 3
MARKED_BONUS = 0.05
LEXICAL_WEIGHT = 0.75
SHORTLIST = 4  # passages per claim worth an embedding


@dataclass(frozen=True)
class Found:
    passage: Passage
    score: float


@dataclass(frozen=True)
class Verdict:
    support: Support
    cited: tuple[Found, ...]


Similarity = Callable[[Passage], float | None]


def _lexical(words: frozenset[str], wanted: frozenset[str], p: Passage) -> float:
    coverage = len(words & p.words) / len(words) if words else 0.0
    if not wanted:
        return coverage
    return 0.7 * coverage + 0.3 * len(wanted & p.words) / len(wanted)


def shortlist(text: str, passages: Sequence[Passage], marked: Collection[int]) -> list[Passage]:
    """The passages worth embedding for a claim: the lexically best ones, and the best of each marked chunk."""
    words, wanted = content_words(text), facts(text)
    if not words:
        return []
    ranked = sorted(passages, key=lambda p: -_lexical(words, wanted, p))
    picked = [p for p in ranked[:SHORTLIST] if words & p.words]
    for chunk in marked:
        best = next((p for p in ranked if p.chunk == chunk), None)
        if best is not None and best not in picked:
            picked.append(best)
    return picked


def judge(text: str, passages: Sequence[Passage], marked: Collection[int], similarity: Similarity) -> Verdict:
    words, wanted = content_words(text), facts(text)
    if not words:
        return Verdict("unsupported", ())

    def score(p: Passage) -> float:
        lexical = _lexical(words, wanted, p)
        sim = similarity(p)
        blended = lexical if sim is None else LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * max(sim, 0.0)
        return blended + (MARKED_BONUS if p.chunk in marked else 0.0)

    ranked = sorted(((p, score(p)) for p in passages), key=lambda ps: -ps[1])
    numbers = frozenset(f for f in wanted if f[0].isdigit())
    only_first = numbers  # facts no further passage may supply
    chosen: list[Found] = []
    held_words: set[str] = set()
    held_facts: set[str] = set()
    for p, s in ranked:
        overlap = words & p.words
        coverage = len(overlap) / len(words)
        if not chosen:
            if coverage < FIRST_PASSAGE_MIN:
                continue
            new_facts = wanted & p.words
            if any(not f[0].isdigit() for f in p.facts - wanted):
                only_first = wanted  # the source names someone the claim does not: a swapped name, not a gap
        else:
            # a further passage must be about the same thing (share a fact already held) and may add names or
            # words, never numbers (those must all come from one passage), nor names when the first passage
            # names someone the claim does not
            anchored = not wanted or bool(held_facts & p.words)
            new_facts = ((wanted - only_first) & p.words) - held_facts
            if coverage < MORE_PASSAGE_MIN or not anchored or not (new_facts or len(overlap - held_words) >= 2):
                continue
        chosen.append(Found(p, round(min(s, 1.0), 3)))
        held_words |= overlap
        held_facts |= new_facts
        if len(chosen) == MAX_CITATIONS or (held_words >= words and held_facts >= wanted):
            break
    return _verdict(words, wanted, chosen, held_words, held_facts, marked, similarity)


def _verdict(  # noqa: PLR0913
    words: frozenset[str],
    wanted: frozenset[str],
    chosen: list[Found],
    held_words: set[str],
    held_facts: set[str],
    marked: Collection[int],
    similarity: Similarity,
) -> Verdict:
    coverage = len(held_words) / len(words)
    best_similarity = max((similarity(f.passage) or 0.0 for f in chosen), default=0.0)
    if not chosen or wanted - held_facts:
        # what the model pointed at stays visible, so a reader can see what the source says instead
        return Verdict("unsupported", tuple(f for f in chosen if f.passage.chunk in marked)[:1])
    cover_min, similarity_min = SUPPORTED_WITH_SIMILARITY
    if coverage >= SUPPORTED_COVERAGE or (coverage >= cover_min and best_similarity >= similarity_min):
        return Verdict("supported", tuple(chosen))
    if coverage >= PARTIAL_COVERAGE:
        return Verdict("partial", tuple(chosen))
    return Verdict("unsupported", ())

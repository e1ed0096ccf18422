"""How much answer coverage retrieval could reach at all, to judge the systems' figures against.

ceiling — the coverage of the whole corpus: every answer term any context could hold (chunks are the only
          source: entity and relation texts are sentences of the chunks).
oracle  — per question, a greedy choice of corpus chunks that knows the answer: it takes, again and again, the
          chunk adding the most answer terms per token, within the budget's tokens (max_total_tokens: the
          whole context given to chunks, no entity or relation lines); "oracle_top_k" also takes at most
          `chunk_top_k` chunks (what the modes' chunk lists are limited to; their graph lines come on top).
          Both are upper bounds no retrieval can claim (they read the answer); being greedy, each is itself
          a lower bound of the best choice within its limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.realtext.scoring import mean, terms


@dataclass(frozen=True)
class Corpus:
    """The chunks' terms and token costs, computed once for every question."""

    chunk_terms: list[frozenset[str]]
    costs: list[int]

    @classmethod
    def of(cls, chunks: Sequence[str], count: Callable[[str], int]) -> Corpus:
        return cls([frozenset(terms(c)) for c in chunks], [max(1, count(c)) for c in chunks])

    @property
    def every_term(self) -> frozenset[str]:
        return frozenset().union(*self.chunk_terms)


def oracle_coverage(wanted: set[str], corpus: Corpus, max_tokens: int, max_chunks: int | None = None) -> float | None:
    """Coverage of `wanted` by the greedy answer-aware choice of chunks within the limits; None when nothing
    is wanted."""
    if not wanted:
        return None
    missing = set(wanted)
    useful = [i for i, t in enumerate(corpus.chunk_terms) if not t.isdisjoint(missing)]
    spent, taken = 0, 0
    while missing and useful and (max_chunks is None or taken < max_chunks):
        affordable = [i for i in useful if spent + corpus.costs[i] <= max_tokens]
        if not affordable:
            break
        best = max(affordable, key=lambda i: (len(corpus.chunk_terms[i] & missing) / corpus.costs[i], -i))
        gain = corpus.chunk_terms[best] & missing
        if not gain:
            break
        missing -= gain
        spent += corpus.costs[best]
        taken += 1
        useful = [i for i in useful if i != best and not corpus.chunk_terms[i].isdisjoint(missing)]
    return 1 - len(missing) / len(wanted)


def headroom(answers: Sequence[str], corpus: Corpus, budgets: dict[str, dict[str, int]]) -> dict[str, dict]:
    """{budget: {"ceiling", "oracle", "oracle_top_k": mean coverages over the answers, and the limits used}}."""
    everything = corpus.every_term
    wanted = [terms(a) for a in answers]
    ceiling = mean(len(w & everything) / len(w) if w else None for w in wanted)
    return {
        name: {
            "ceiling": ceiling,
            "oracle": mean(oracle_coverage(w, corpus, limits["max_total_tokens"]) for w in wanted),
            "oracle_top_k": mean(
                oracle_coverage(w, corpus, limits["max_total_tokens"], limits["chunk_top_k"]) for w in wanted
            ),
            "tokens": limits["max_total_tokens"],
            "chunk_top_k": limits["chunk_top_k"],
        }
        for name, limits in budgets.items()
    }

"""The candidate-pool ceiling (`--ceiling`): how far the best choice among the chunks the service's modes
consider could reach, as against the whole-corpus oracle of bench/realtext/headroom.py.

Per question and budget, the pool is every chunk any mode could show at that budget: hybrid asked with room for
all its candidates (chunk_top_k = LOCAL_CANDIDATES + CANDIDATES, a token budget no context fills; top_k and the
graph's token budgets as the budget's, so the sides find what they find at it) holds both sides' ranked
candidates, which local and global are ranked from too; naive at the budget adds the searched chunks mix fuses.
An answer-aware greedy choice within the budget's tokens and `chunk_top_k` chunks (headroom.oracle_coverage) then
says what a perfect order of those candidates would give: a gap between it and the modes is ranking, a gap
between it and the corpus oracle is candidates. Like the corpus oracle it reads the answer: an upper bound no
retrieval can claim; it counts chunk text only (the modes' graph lines add a little on top)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.realtext.headroom import Corpus, oracle_coverage
from bench.realtext.scoring import mean, terms

WIDE_TOKENS = 1_000_000  # MAX_TOKEN_LIMIT's default: no context of the pool comes near it


def wide_limits(limits: dict[str, int]) -> dict[str, int]:
    """The budget's limits with room for every candidate chunk of both sides."""
    from app.services.query.graph_chunks import CANDIDATES, LOCAL_CANDIDATES

    return {**limits, "chunk_top_k": LOCAL_CANDIDATES + CANDIDATES, "max_total_tokens": WIDE_TOKENS}


async def candidate_pool(system: Any, question: str, limits: dict[str, int]) -> tuple[list[str], list[str]]:
    """The distinct chunk texts any mode could show for `question` at `limits`: hybrid's candidates in its
    ranked order, and naive's searched chunks hybrid lacks."""
    wide = await system.query(question, "hybrid", wide_limits(limits))
    searched = await system.query(question, "naive", limits)
    ranked = list(dict.fromkeys(c["content"].strip() for c in wide.get("chunks", [])))
    return ranked, [
        t for t in dict.fromkeys(c["content"].strip() for c in searched.get("chunks", [])) if t not in ranked
    ]


def pool_figures(
    answer: str, pool: tuple[Sequence[str], Sequence[str]], count: Callable[[str], int], limits: dict[str, int]
) -> dict:
    """One question's pool (hybrid's ranked candidates, naive's others): its size, the share of the answer's terms
    it holds at all, the answer-aware choice's coverage within the budget's tokens, and within its tokens and
    chunk_top_k chunks; and, answer-blind, the coverage of hybrid's first chunk_top_k and 2 × chunk_top_k
    candidates (chunk text only: what its own order would give with the room of twice the chunks)."""
    ranked, others = pool
    wanted = terms(answer)
    corpus = Corpus.of([*ranked, *others], count)
    held = corpus.every_term if corpus.chunk_terms else frozenset()
    tokens, top_k = limits["max_total_tokens"], limits["chunk_top_k"]

    def first(n: int) -> float | None:
        return len(wanted & frozenset().union(*corpus.chunk_terms[:n])) / len(wanted) if wanted else None

    return {
        "pool_chunks": len(corpus.chunk_terms),
        "pool_terms": len(wanted & held) / len(wanted) if wanted else None,
        "pool_oracle": oracle_coverage(wanted, corpus, tokens),
        "pool_oracle_top_k": oracle_coverage(wanted, corpus, tokens, top_k),
        "hybrid_first_top_k": first(min(top_k, len(ranked))),
        "hybrid_first_2_top_k": first(min(2 * top_k, len(ranked))),
    }


FIGURES = (
    "pool_chunks",
    "pool_terms",
    "pool_oracle",
    "pool_oracle_top_k",
    "hybrid_first_top_k",
    "hybrid_first_2_top_k",
)


def summarise_pools(rows: list[dict[str, Any]], types: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{budget: {figure: mean over the questions, "by_type": {type: {figure: mean}}}} from rows holding a
    question's "budget", "type" and pool_figures."""
    out: dict[str, dict[str, Any]] = {}
    for budget in dict.fromkeys(r["budget"] for r in rows):
        mine = [r for r in rows if r["budget"] == budget]
        out[budget] = {f: mean(r[f] for r in mine) for f in FIGURES}
        out[budget]["by_type"] = {
            t: {f: mean(r[f] for r in mine if r["type"] == t) for f in FIGURES if f != "pool_chunks"} for t in types
        }
    return out


async def pool_rows(
    system: Any, questions: Sequence[Any], budgets: dict[str, dict[str, int]], count: Callable[[str], int]
) -> list[dict[str, Any]]:
    """pool_figures for every question (with .id, .text, .type, .answer) at every budget."""
    rows = []
    for budget, limits in budgets.items():
        for q in questions:
            pool = await candidate_pool(system, q.text, limits)
            rows.append({"budget": budget, "id": q.id, "type": q.type} | pool_figures(q.answer, pool, count, limits))
        print(f"  service {budget}: candidate pools of {len(questions)} questions read", flush=True)
    return rows

"""Reciprocal-rank fusion and the priority merge that keeps each side's best items ahead of token trimming.
Pure functions over ranked lists."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")

DEFAULT_RRF_K = 20
WEIGHT_EXPONENT = 0.1  # relation weight's mild say in global ranking: weight 10 → ×1.26, weight 0.5 → ×0.93


def rrf_scores(rankings: Sequence[Sequence[Hashable]], k: int = DEFAULT_RRF_K) -> dict[Hashable, float]:
    """Σ 1 / (k + rank) over the lists an item appears in (rank from 1; a repeat within a list counts once)."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(dict.fromkeys(ranking), start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def fuse(
    rankings: Sequence[Sequence[T]],
    key: Callable[[T], Hashable],
    k: int = DEFAULT_RRF_K,
    boost: Callable[[T], float] | None = None,
) -> list[tuple[T, float]]:
    """Items of all rankings, best fused score first (score × boost(item) when given). Ties keep the order
    of first appearance, lists taken in turn, so the fusion is deterministic."""
    scores = rrf_scores([[key(item) for item in ranking] for ranking in rankings], k)
    first: dict[Hashable, T] = {}
    for i in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if i < len(ranking):
                first.setdefault(key(ranking[i]), ranking[i])
    scored = [(item, scores[k_] * (boost(item) if boost else 1.0)) for k_, item in first.items()]
    order = {k_: i for i, k_ in enumerate(first)}
    return sorted(scored, key=lambda pair: (-pair[1], order[key(pair[0])]))


def weight_factor(weight: float) -> float:
    """A relation's weight as a mild multiplier (weights are sums of extraction strengths, often 1-20)."""
    return math.pow(max(weight, 1e-3), WEIGHT_EXPONENT)


def priority_merge(sides: Sequence[tuple[Sequence[T], int]], key: Callable[[T], Hashable]) -> list[T]:
    """Each side is (ranked items, how many leading items must come first). The leading items of every side,
    side by side in the given order, then the rest round-robin — without duplicates. A plain round-robin
    would let a budget cut fall in the middle of one side's essential items."""
    out: list[T] = []
    seen: set[Hashable] = set()

    def take(item: T) -> None:
        item_key = key(item)
        if item_key not in seen:
            seen.add(item_key)
            out.append(item)

    for items, lead in sides:
        for item in items[:lead]:
            take(item)
    rests = [items[lead:] for items, lead in sides]
    for i in range(max((len(r) for r in rests), default=0)):
        for rest in rests:
            if i < len(rest):
                take(rest[i])
    return out


def interleave(rankings: Sequence[Sequence[Hashable]]) -> list[Hashable]:
    """Keys of all rankings by their best rank in any of them, so the first n keys hold every ranking's top
    n // len(rankings) (a key two rankings share frees a place for a deeper one); at equal best rank, a key more
    rankings hold, then one they rank higher in sum, comes first; then first appearance (rankings in turn).
    Unlike summed reciprocal ranks, a passage only one ranking finds is never pushed out by keys every ranking
    ranks middling."""
    positions: dict[Hashable, list[int]] = {}
    for i in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if i < len(ranking):
                positions.setdefault(ranking[i], [])
    for ranking in rankings:
        for rank, key in enumerate(dict.fromkeys(ranking)):
            positions[key].append(rank)
    first = {key: i for i, key in enumerate(positions)}
    return sorted(
        positions, key=lambda key: (min(positions[key]), -len(positions[key]), sum(positions[key]), first[key])
    )

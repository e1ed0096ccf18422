"""Which chunks to take from the selected entities and relations, and the round-robin
merge of chunk sources (8.6). Pure functions: the caller fetches provenance and similarities."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def candidate_lists(per_item: Sequence[Sequence[str]], exclude: Iterable[str] = ()) -> list[list[str]]:
    """Each chunk is kept only for the first item listing it; every item's list is then ordered by how many
    items list the chunk (stable, so insertion order breaks ties). Items left with no chunk get []."""
    excluded = set(exclude)
    cleaned = [[c for c in dict.fromkeys(ids) if c not in excluded] for ids in per_item]
    occurrences = Counter(c for ids in cleaned for c in ids)
    seen: set[str] = set()
    out: list[list[str]] = []
    for ids in cleaned:
        own = [c for c in ids if c not in seen]
        seen.update(own)
        out.append(sorted(own, key=lambda c: -occurrences[c]))
    return out


def pick_by_weighted_polling(lists: Sequence[Sequence[str]], max_related: int, min_related: int = 1) -> list[str]:
    """Higher-ranked items get more chunks: expected_i falls linearly from max to min; the shortfall of
    items with too few chunks is handed out one at a time to the first item that still has unused ones."""
    pools = [list(items) for items in lists if items]
    n = len(pools)
    if n == 0:
        return []
    if n == 1:
        return pools[0][:max_related]
    expected = [round(max_related - (i / (n - 1)) * (max_related - min_related)) for i in range(n)]
    taken = [min(e, len(items)) for e, items in zip(expected, pools, strict=True)]
    picked = [c for items, t in zip(pools, taken, strict=True) for c in items[:t]]
    shortfall = sum(e - t for e, t in zip(expected, taken, strict=True))
    while shortfall > 0:
        for i, items in enumerate(pools):
            if taken[i] < len(items):
                picked.append(items[taken[i]])
                taken[i] += 1
                shortfall -= 1
                break
        else:
            break
    return picked


def pick_by_vector(lists: Sequence[Sequence[str]], distances: dict[str, float], related: int) -> list[str] | None:
    """The chunks closest to the query, budget = related × items-with-chunks / 2. None → caller falls back to
    weighted polling (a candidate without a stored vector, or nothing to pick)."""
    candidates = list(dict.fromkeys(c for items in lists for c in items))
    with_chunks = sum(1 for items in lists if items)
    budget = int(related * with_chunks / 2)
    if not candidates or budget <= 0 or any(c not in distances for c in candidates):
        return None
    order = {c: i for i, c in enumerate(candidates)}
    return sorted(candidates, key=lambda c: (distances[c], order[c]))[:budget]


def round_robin(*sources: Sequence[T], key: Callable[[T], Hashable] = lambda item: item) -> list[T]:
    """Take item i of every source in turn, skipping items whose key was already taken."""
    out: list[T] = []
    seen: set[Hashable] = set()
    for i in range(max((len(s) for s in sources), default=0)):
        for source in sources:
            if i < len(source):
                k = key(source[i])
                if k not in seen:
                    seen.add(k)
                    out.append(source[i])
    return out

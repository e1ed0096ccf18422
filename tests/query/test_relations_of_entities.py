"""The edges of a local query's entities: the named ones' first, the rest by closeness to the query, then by
edge degree and weight. The statement looks endpoint degrees up only for the edges within the limit by
(tier, distance), so it is checked against the whole rule written out in Python on a graph with a hub,
edges without a vector and exact distance ties exactly at the cut."""

from __future__ import annotations

import math
import random

import asyncpg

from app.db.engine import Database, async_url
from app.repositories.retrieval import relations_of_entities
from tests.support.database import TEST_DIM

Edge = tuple[str, str, float, int | None]  # source, target, weight, index of its vector (None: no vector)


def _vectors(rng: random.Random) -> list[list[float]]:
    """A few distinct vectors: edges sharing one are at exactly the same distance from the query."""
    return [[rng.uniform(-1, 1) for _ in range(TEST_DIM)] for _ in range(5)]


def _graph(seed: int) -> tuple[list[Edge], dict[str, int]]:
    rng = random.Random(seed)
    keys = [f"e{i:02d}" for i in range(40)]
    pairs: set[tuple[str, str]] = {("e00", k) for k in keys[1:]}  # e00 is a hub
    while len(pairs) < 160:
        a, b = sorted(rng.sample(keys, 2))  # pairs are stored sorted
        pairs.add((a, b))
    edges = [(a, b, float(rng.choice([1, 2])), rng.choice([None, 0, 1, 2, 3, 4])) for a, b in sorted(pairs)]
    degrees = {k: rng.choice([1, 5, 9]) for k in keys}
    return edges, degrees


def _distance(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _expected(
    edges: list[Edge], degrees: dict[str, int], vectors: list[list[float]], query: list[float], keys: list[str]
) -> list[tuple[str, str]]:
    """The rule of `relations_of_entities`, anchored on the first key, with every edge considered."""
    ranked = []
    for a, b, weight, vec in edges:
        positions = [i + 1 for i, k in enumerate(keys) if k in (a, b)]
        if not positions:
            continue
        first = min(positions)
        distance = 2.0 if vec is None else _distance(vectors[vec], query)
        ranked.append(((min(first, 2), round(distance, 9), -(degrees[a] + degrees[b]), -weight, first, a, b), (a, b)))
    return [pair for _, pair in sorted(ranked)]


async def _store(database_url: str, edges: list[Edge], degrees: dict[str, int], vectors: list[list[float]]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('p', 'p')")
        await conn.executemany(
            "INSERT INTO entities (project_id, key, name) VALUES ('p', $1, $1)", [(k,) for k in degrees]
        )
        await conn.executemany(
            "INSERT INTO relations (project_id, src_key, tgt_key, weight, embedding)"
            " VALUES ('p', $1, $2, $3, $4::text::vector)",
            [(a, b, w, None if v is None else str(vectors[v])) for a, b, w, v in edges],
        )
        # set after the relations (their insert counts degrees): few values, so edge degrees tie
        await conn.executemany("UPDATE entities SET degree = $2 WHERE project_id = 'p' AND key = $1", degrees.items())
    finally:
        await conn.close()


async def test_a_hubs_edges_rank_by_the_whole_rule_whatever_the_cut(database_url: str) -> None:
    rng = random.Random(5)
    edges, degrees = _graph(3)
    vectors = _vectors(rng)
    query = [rng.uniform(-1, 1) for _ in range(TEST_DIM)]
    await _store(database_url, edges, degrees, vectors)
    db = Database(async_url(database_url), pool_size=1)
    try:
        for keys in (["e07", "e00", "e13"], ["e00", "e21"], ["e31", "e32", "e33", "missing"]):
            every = _expected(edges, degrees, vectors, query, keys)
            for limit in (1, 3, 7, 12, 25, 40, len(every), len(every) + 5):
                async with db.connect() as c:
                    found = await relations_of_entities(c, "p", keys, limit, query, anchored=1)
                assert [r.pair for r in found] == every[:limit], (keys, limit)
    finally:
        await db.close()

"""Graph expansion reads each node's heaviest edges from both of its sides (each side stops early on the
weight-ordered indexes of migration 0017); what it returns is checked against the rule written out in Python
on a graph with hubs and tied weights."""

from __future__ import annotations

import random

import asyncpg
from sqlalchemy import text

from app.db.engine import Database, async_url
from app.repositories.neighbourhood import FRONTIER, FRONTIER_EDGES, SEED_EDGES, neighbourhood_edges

Edge = tuple[str, str, float]


def _graph(seed: int) -> list[Edge]:
    rng = random.Random(seed)
    keys = [f"e{i:02d}" for i in range(60)]
    pairs: set[tuple[str, str]] = set()
    while len(pairs) < 400:  # the first keys are hubs with dozens of edges on both sides
        a, b = keys[min(int(rng.paretovariate(0.8)) - 1, 59)], rng.choice(keys)
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    return [(a, b, float(rng.choice([1, 2, 3]))) for a, b in sorted(pairs)]


def _heaviest(edges: list[Edge], node: str, limit: int) -> list[Edge]:
    touching = [e for e in edges if node in (e[0], e[1])]
    return sorted(touching, key=lambda e: (-e[2], e[0], e[1]))[:limit]


def _expected(edges: list[Edge], seeds: list[str]) -> set[Edge]:
    hop1 = {e for s in set(seeds) for e in _heaviest(edges, s, SEED_EDGES)}
    reach: dict[str, float] = {}
    for a, b, w in hop1:
        other = b if a in seeds else a
        if other not in seeds:
            reach[other] = reach.get(other, 0.0) + w
    frontier = sorted(reach, key=lambda k: (-reach[k], k))[:FRONTIER]
    return hop1 | {e for n in frontier for e in _heaviest(edges, n, FRONTIER_EDGES)}


async def _store(database_url: str, edges: list[Edge]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('p', 'p')")
        keys = sorted({k for a, b, _ in edges for k in (a, b)})
        await conn.executemany(
            "INSERT INTO entities (project_id, key, name) VALUES ('p', $1, $1)", [(k,) for k in keys]
        )
        await conn.executemany(
            "INSERT INTO relations (project_id, src_key, tgt_key, weight) VALUES ('p', $1, $2, $3)", edges
        )
    finally:
        await conn.close()


async def test_the_heaviest_edges_of_seeds_and_frontier_are_followed(database_url: str) -> None:
    edges = _graph(7)
    await _store(database_url, edges)
    db = Database(async_url(database_url), pool_size=1)
    try:
        for seeds in (["e00"], ["e00", "e01", "e02"], ["e30", "e41"], ["e05", "e59", "e00", "missing"]):
            async with db.connect() as c:
                found = await neighbourhood_edges(c, "p", seeds)
            assert len(found) == len(set(found))
            assert set(found) == _expected(edges, seeds), seeds
    finally:
        await db.close()


async def test_the_edges_come_in_key_order_whatever_the_plan(database_url: str) -> None:
    """The walk sums rank mass in edge order, and a different order can break its exact ties another way: the
    order must not be the UNION's (a hash table's when it is hashed, the keys' when it is sorted)."""
    await _store(database_url, _graph(11))
    db = Database(async_url(database_url), pool_size=1)
    seeds = ["e00", "e01", "e02", "e17", "e33"]
    try:
        orders = []
        for sorting in ("on", "off"):  # off: the planner hashes the UNION rather than merge sorted sides
            async with db.connect() as c:
                await c.execute(text(f"SET enable_sort = {sorting}"))
                orders.append(await neighbourhood_edges(c, "p", seeds))
                await c.execute(text("RESET enable_sort"))
        assert orders[0] == orders[1] == sorted(orders[0])
    finally:
        await db.close()

"""SQL of graph expansion: the weighted edges within two hops of a query's entities (for personalised
PageRank, `domain/graph_rank.py`) and the vector and full-text evidence of candidate chunks.

Hubs are bounded per node (their heaviest edges), so an entity with thousands of edges never pulls them all:
the walk only needs the strongest ways out of each node.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.graph_rank import Edge
from app.repositories.retrieval import QUERY_VECTOR, processed

SEED_EDGES = 10  # heaviest edges followed out of each seed entity
FRONTIER = 30  # entities one hop away whose own edges are followed (by the weight that reached them)
FRONTIER_EDGES = 5  # heaviest edges followed out of each of those


class ChunkEvidence(NamedTuple):
    distance: float | None  # cosine distance to the question, None without an embedding
    lexical: float  # full-text rank of the question's words
    words: list[str]  # the question's words the chunk holds
    document: str  # the document the chunk is part of


# Each side takes its own heaviest edges first, walking the (key, weight DESC, other key) index (migration
# 0017) and stopping after `limit`: the top of the union is among them. Sorting the union alone read every
# edge of a hub (thousands at 25x, most of a local query's time).
_EDGES_OF = """
SELECT x.src_key, x.tgt_key, x.weight FROM (
    (SELECT r.src_key, r.tgt_key, r.weight FROM relations r
     WHERE r.project_id = :project_id AND r.src_key = n.key
     ORDER BY r.weight DESC, r.tgt_key LIMIT {limit})
    UNION ALL
    (SELECT r.src_key, r.tgt_key, r.weight FROM relations r
     WHERE r.project_id = :project_id AND r.tgt_key = n.key
     ORDER BY r.weight DESC, r.src_key LIMIT {limit})
) x ORDER BY x.weight DESC, x.src_key, x.tgt_key LIMIT {limit}
"""

_NEIGHBOURHOOD = text(f"""
WITH seeds AS (SELECT DISTINCT unnest(CAST(:keys AS text[])) AS key),
hop1 AS MATERIALIZED (
    SELECT DISTINCT e.src_key, e.tgt_key, e.weight FROM seeds n
    CROSS JOIN LATERAL ({_EDGES_OF.format(limit=":seed_edges")}) e
),
frontier AS (
    SELECT f.key FROM (
        SELECT CASE WHEN h.src_key IN (SELECT key FROM seeds) THEN h.tgt_key ELSE h.src_key END AS key, h.weight
        FROM hop1 h
    ) f
    WHERE f.key NOT IN (SELECT key FROM seeds)
    GROUP BY f.key ORDER BY sum(f.weight) DESC, f.key LIMIT :frontier
),
hop2 AS (
    SELECT e.src_key, e.tgt_key, e.weight FROM frontier n
    CROSS JOIN LATERAL ({_EDGES_OF.format(limit=":frontier_edges")}) e
)
SELECT src_key, tgt_key, weight FROM hop1
UNION
SELECT src_key, tgt_key, weight FROM hop2
ORDER BY src_key, tgt_key, weight
""")

# The query vector's cosine distance and the full-text rank (normalised by 1 + log(length)) of each candidate.
# `q` is materialized: inlined, the planner put it inside the loop over the candidates and parsed every word
# again for each chunk.
_CHUNK_EVIDENCE = text(f"""
WITH word AS MATERIALIZED (
    SELECT w, n, plainto_tsquery('english', w) AS query
    FROM unnest(CAST(:words AS text[])) WITH ORDINALITY AS u(w, n)
    WHERE numnode(plainto_tsquery('english', w)) > 0
), q AS MATERIALIZED (
    SELECT string_agg('(' || word.query::text || ')', ' | ' ORDER BY word.n)::tsquery AS query FROM word
)
SELECT c.id, c.embedding <=> :vec AS distance,
       coalesce(ts_rank(c.search_vector, q.query, 1), 0) AS lexical,
       ARRAY(SELECT word.w FROM word WHERE c.search_vector @@ word.query ORDER BY word.n) AS matched,
       c.document_id
FROM chunks c, q
WHERE c.project_id = :project_id AND c.id = ANY(CAST(:ids AS text[])) AND {processed("c")}
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))


async def neighbourhood_edges(conn: AsyncConnection, project_id: str, keys: list[str]) -> list[Edge]:
    """(source, target, weight) of the edges within two hops of `keys`, bounded per node, in key order: the
    walk sums rank mass in edge order, so an order left to the plan (a hash or a sort for the UNION) could
    break its exact ties another way."""
    if not keys:
        return []
    params = {
        "project_id": project_id,
        "keys": keys,
        "seed_edges": SEED_EDGES,
        "frontier": FRONTIER,
        "frontier_edges": FRONTIER_EDGES,
    }
    result = await conn.execute(_NEIGHBOURHOOD, params)
    return [(row.src_key, row.tgt_key, float(row.weight)) for row in result]


async def chunk_evidence(
    conn: AsyncConnection, project_id: str, ids: list[str], vec: list[float], words: list[str]
) -> dict[str, ChunkEvidence]:
    """chunk id → its evidence (cosine distance to `vec` or None without an embedding, full-text rank of
    `words`, the `words` it holds, its document) for the stored, processed chunks among `ids`."""
    if not ids:
        return {}
    params = {"project_id": project_id, "ids": ids, "vec": vec, "words": words}
    result = await conn.execute(_CHUNK_EVIDENCE, params)
    return {
        row.id: ChunkEvidence(
            None if row.distance is None else float(row.distance), float(row.lexical), row.matched, row.document_id
        )
        for row in result
    }


# The question's nearest chunks and the entities each cites (at most :per_chunk, first extracted first): the
# passages the question's embedding alone finds become nodes of the walk, linked to their entities, so a
# passage sharing a bridge entity with one of them gets mass too (HippoRAG 2 seeds its passages so).
_NEAREST_CHUNK_ENTITIES = text(f"""
WITH nearest AS MATERIALIZED (
    SELECT c.id, c.embedding <=> :vec AS distance
    FROM chunks c
    WHERE c.project_id = :project_id AND c.embedding IS NOT NULL AND {processed("c")}
    ORDER BY c.embedding <=> :vec
    LIMIT :limit
)
SELECT n.id, n.distance, coalesce(e.keys, CAST(ARRAY[] AS text[])) AS keys
FROM nearest n
LEFT JOIN LATERAL (
    SELECT array_agg(s.entity_key ORDER BY s.seq) AS keys FROM (
        SELECT es.entity_key, es.seq FROM entity_sources es
        WHERE es.project_id = :project_id AND es.chunk_id = n.id
        ORDER BY es.seq LIMIT :per_chunk
    ) s
) e ON true
WHERE n.distance < :max_distance
ORDER BY n.distance, n.id
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))


async def nearest_chunk_entities(
    conn: AsyncConnection, project_id: str, vec: list[float], limit: int, max_distance: float, per_chunk: int
) -> list[tuple[str, float, list[str]]]:
    """(chunk id, cosine distance, keys of the entities it cites) of the `limit` chunks nearest to `vec`,
    nearest first."""
    params = {"project_id": project_id, "vec": vec, "limit": limit, "max_distance": max_distance}
    result = await conn.execute(_NEAREST_CHUNK_ENTITIES, params | {"per_chunk": per_chunk})
    return [(row.id, float(row.distance), list(row.keys)) for row in result]

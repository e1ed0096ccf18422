"""SQL behind the duplicate review and alias curation: same-type entities close in embedding space, the
neighbours two entities share. Every statement is project-scoped; the alias and rejection tables are
written through repositories/aliases.py."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

Pair = tuple[str, str]

# The nearest same-type entities of the `probes` most recently changed entities (new duplicates come with
# new documents), by the entity vector index (HNSW, iterative scan set by the caller): one index search per
# probe, ~1 ms each. The similarity floor is applied outside the lateral search, as pgvector advises for
# iterative scans; pairs come once per direction and are de-duplicated by the caller.
_SIMILAR = text("""
    SELECT e.key AS key_a, n.key AS key_b, 1 - n.distance AS score
    FROM (SELECT project_id, key, entity_type, embedding FROM entities
          WHERE project_id = :project_id AND embedding IS NOT NULL
          ORDER BY updated_at DESC, key LIMIT :probes) e
    CROSS JOIN LATERAL (
        SELECT x.key, x.embedding <=> e.embedding AS distance
        FROM entities x
        WHERE x.project_id = e.project_id AND x.entity_type = e.entity_type AND x.key <> e.key
          AND x.embedding IS NOT NULL
        ORDER BY x.embedding <=> e.embedding
        LIMIT :neighbours
    ) n
    WHERE n.distance <= :max_distance
    ORDER BY score DESC, e.key, n.key
    LIMIT :cap
""")

_SHARED = text("""
    WITH wanted AS (SELECT * FROM unnest(CAST(:a AS text[]), CAST(:b AS text[])) AS w(a, b)),
    adjacent AS (
        SELECT src_key AS k, tgt_key AS other FROM relations WHERE project_id = :project_id
        UNION ALL
        SELECT tgt_key, src_key FROM relations WHERE project_id = :project_id
    )
    SELECT w.a, w.b, en.name
    FROM wanted w
    JOIN adjacent na ON na.k = w.a
    JOIN adjacent nb ON nb.k = w.b AND nb.other = na.other
    JOIN entities en ON en.project_id = :project_id AND en.key = na.other
    WHERE na.other NOT IN (w.a, w.b)
    ORDER BY w.a, w.b, en.degree DESC, en.key
""")


async def similar_pairs(
    conn: AsyncConnection, project_id: str, *, min_similarity: float, neighbours: int, probes: int, cap: int
) -> list[tuple[str, str, float]]:
    """(key, key, cosine similarity) of same-type entity pairs at least `min_similarity` alike, best first,
    each unordered pair once."""
    rows = await conn.execute(
        _SIMILAR,
        {
            "project_id": project_id,
            "neighbours": neighbours,
            "probes": probes,
            "max_distance": 1.0 - min_similarity,
            "cap": cap * 2,
        },
    )
    seen: dict[Pair, float] = {}
    for a, b, score in rows.all():
        pair = (a, b) if a < b else (b, a)
        seen[pair] = max(seen.get(pair, 0.0), float(score))
    return [(a, b, s) for (a, b), s in list(seen.items())[:cap]]


async def shared_neighbours(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> dict[Pair, list[str]]:
    """For each pair, the display names of the entities related to both (highest degree first)."""
    if not pairs:
        return {}
    rows = await conn.execute(
        _SHARED, {"project_id": project_id, "a": [p[0] for p in pairs], "b": [p[1] for p in pairs]}
    )
    out: dict[Pair, list[str]] = {}
    for a, b, name in rows.all():
        names = out.setdefault((a, b), [])
        if name not in names:
            names.append(name)
    return out

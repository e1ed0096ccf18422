"""SQL behind the LLM judge's candidates (app/domain/judge_candidates.py): the stored entities nearest to a
document's new names, by the entity vector index and, where the server has pg_trgm, by trigram similarity of
keys. One statement per source whatever the number of names; every statement is project-scoped."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.judge_candidates import Neighbour

# One index search per name (the vector index, iterative scan set by the caller); the floor is applied outside
# the lateral search, as pgvector advises for iterative scans.
_NEAREST = text("""
    WITH probe AS (SELECT * FROM unnest(CAST(:keys AS text[]), CAST(:vectors AS text[])) AS p(name_key, vec))
    SELECT p.name_key, n.key, n.name, n.entity_type, n.description, 1 - n.distance AS similarity
    FROM probe p
    CROSS JOIN LATERAL (
        SELECT key, name, entity_type, description, embedding <=> CAST(p.vec AS vector) AS distance
        FROM entities
        WHERE project_id = :project_id AND embedding IS NOT NULL
        ORDER BY embedding <=> CAST(p.vec AS vector)
        LIMIT :limit
    ) n
    WHERE n.distance <= :max_distance
    ORDER BY p.name_key, n.distance, n.key
""")

_HAS_TRIGRAMS = text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')")

# `%` uses the trigram index on entities.key (migration 0005), its threshold set for the reading's transaction.
_TRIGRAM = text("SELECT set_config('pg_trgm.similarity_threshold', :floor, true)")
_TRIGRAM_NEAREST = text("""
    SELECT p.name_key, n.key, n.name, n.entity_type, n.description, n.similarity
    FROM unnest(CAST(:keys AS text[])) AS p(name_key)
    CROSS JOIN LATERAL (
        SELECT key, name, entity_type, description, similarity(key, p.name_key) AS similarity
        FROM entities
        WHERE project_id = :project_id AND key % p.name_key AND key <> p.name_key
        ORDER BY similarity(key, p.name_key) DESC, key
        LIMIT :limit
    ) n
    ORDER BY p.name_key, n.similarity DESC, n.key
""")


def _vector_text(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


async def nearest_by_embedding(
    conn: AsyncConnection,
    project_id: str,
    probes: Sequence[tuple[str, Sequence[float]]],
    *,
    min_similarity: float,
    limit: int,
) -> list[Neighbour]:
    """For each (name key, embedding of its name and description), the `limit` nearest entities at least
    `min_similarity` (cosine) alike."""
    if not probes:
        return []
    rows = await conn.execute(
        _NEAREST,
        {
            "project_id": project_id,
            "keys": [k for k, _ in probes],
            "vectors": [_vector_text(v) for _, v in probes],
            "limit": limit,
            "max_distance": 1.0 - min_similarity,
        },
    )
    return [Neighbour(r[0], r[1], r[2], r[3], r[4], float(r[5]), "embedding") for r in rows.all()]


async def has_trigrams(conn: AsyncConnection) -> bool:
    return bool(await conn.scalar(_HAS_TRIGRAMS))


async def nearest_by_trigrams(
    conn: AsyncConnection, project_id: str, keys: Sequence[str], *, min_similarity: float, limit: int
) -> list[Neighbour]:
    """For each name key, the `limit` entity keys of the closest trigram similarity, at least `min_similarity`
    (pg_trgm's measure); none where the server has no pg_trgm (the embedded PostgreSQL of the tests)."""
    if not keys or not await has_trigrams(conn):
        return []
    await conn.execute(_TRIGRAM, {"floor": str(min_similarity)})
    rows = await conn.execute(_TRIGRAM_NEAREST, {"project_id": project_id, "keys": list(keys), "limit": limit})
    return [Neighbour(r[0], r[1], r[2], r[3], r[4], float(r[5]), "trigram") for r in rows.all()]

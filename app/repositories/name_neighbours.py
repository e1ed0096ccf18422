"""SQL behind the LLM judge's candidates (app/domain/judge_candidates.py): the stored entities nearest to a
document's new names, by the entity vector index and, where the server has pg_trgm, by trigram similarity of
keys, and by a code's letters in a name's key ("LBN" / "Lebanon"). One statement per source whatever the number of
names; every statement is project-scoped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.judge_candidates import CODE_FIT, Neighbour

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


# A code's letters in order in an entity's key, the first letter first ("lbn": "lebanon", "moldovan leu"), and the
# stored codes whose letters the new name's key holds so: the prefix keeps the first search on the key's index.
_CODE_FITS = text("""
    SELECT p.name_key, n.key, n.name, n.entity_type, n.description
    FROM unnest(CAST(:keys AS text[]), CAST(:patterns AS text[])) AS p(name_key, pattern)
    CROSS JOIN LATERAL (
        SELECT key, name, entity_type, description
        FROM entities
        WHERE project_id = :project_id AND key LIKE p.pattern AND key <> p.name_key
        ORDER BY length(key), key
        LIMIT :limit
    ) n
""")
_CODES_FITTING = text("""
    SELECT p.name_key, e.key, e.name, e.entity_type, e.description
    FROM unnest(CAST(:keys AS text[])) AS p(name_key)
    JOIN entities e ON e.project_id = :project_id AND e.name ~ '^[A-Z]{3,5}$' AND e.key <> p.name_key
        AND p.name_key LIKE regexp_replace(e.key, '(.)', '\\1%', 'g')
    ORDER BY p.name_key, e.key
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


async def fitting_codes(
    conn: AsyncConnection, project_id: str, codes: Mapping[str, str], names: Sequence[str], *, limit: int
) -> list[Neighbour]:
    """Entities a code may stand for and codes a name may have, by letters alone (`code_pattern`): for each new
    code (name key → LIKE pattern of its letters) the `limit` shortest stored keys holding its letters in order,
    and for each new name key the stored codes (three to five capitals) whose letters it holds so."""
    found: list[Neighbour] = []
    if codes:
        params = {"project_id": project_id, "keys": list(codes), "patterns": list(codes.values()), "limit": limit}
        rows = (await conn.execute(_CODE_FITS, params)).all()
        found += [Neighbour(r[0], r[1], r[2], r[3], r[4], CODE_FIT, "letters") for r in rows]
    if names:
        params = {"project_id": project_id, "keys": list(names)}
        rows = (await conn.execute(_CODES_FITTING, params)).all()
        found += [Neighbour(r[0], r[1], r[2], r[3], r[4], CODE_FIT, "letters") for r in rows]
    return found

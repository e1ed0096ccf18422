"""SQL behind the LLM judge's reverse neighbours (app/domain/judge_candidates.py::choose): the stored entities
nearest to a stored entity's own embedding, so a new name may be asked about an entity it ranks low for when
that entity would rank it among its own nearest, as it would in the other ingestion order."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.judge_candidates import Neighbour

# One index search per stored entity (iterative scan set by the caller, as for name_neighbours.py).
_AROUND = text("""
    SELECT s.key, n.key, n.name, n.entity_type, n.description, 1 - n.distance AS similarity
    FROM unnest(CAST(:keys AS text[])) AS p(key)
    JOIN entities s ON s.project_id = :project_id AND s.key = p.key AND s.embedding IS NOT NULL
    CROSS JOIN LATERAL (
        SELECT key, name, entity_type, description, embedding <=> s.embedding AS distance
        FROM entities
        WHERE project_id = :project_id AND embedding IS NOT NULL AND key <> s.key
        ORDER BY embedding <=> s.embedding
        LIMIT :limit
    ) n
    ORDER BY s.key, n.distance, n.key
""")


async def around_stored(
    conn: AsyncConnection, project_id: str, keys: Sequence[str], *, limit: int
) -> dict[str, list[Neighbour]]:
    """Stored entity key → its `limit` nearest other entities by their stored embeddings, nearest first."""
    if not keys:
        return {}
    rows = await conn.execute(_AROUND, {"project_id": project_id, "keys": sorted(keys), "limit": limit})
    out: dict[str, list[Neighbour]] = {}
    for r in rows.all():
        out.setdefault(r[0], []).append(Neighbour(r[0], r[1], r[2], r[3], r[4], float(r[5]), "embedding"))
    return out

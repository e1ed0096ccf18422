"""SQL for the standing automatic merges of given names (the ledger rows a document's relations may
contradict: app/domain/absorption.py::contradicted)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories.resolution_ledger import ShortFormMerge

# Only merges into an entity that still exists stand. Read only for a document relating two writings of one
# person's name (rare): the project's ledger rows scanned, no index of their own.
_STANDING = text("""
SELECT l.id, l.entity_key, l.merged_key, l.merged_name, l.rule, l.evidence, l.retroactive
  FROM entity_merge_ledger l
  JOIN entities e ON e.project_id = l.project_id AND e.key = l.entity_key
 WHERE l.project_id = :project_id AND l.merged_key = ANY(CAST(:keys AS text[])) AND l.outcome IS NULL
 ORDER BY l.id
""")


async def standing_merges_of(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[ShortFormMerge]:
    """The standing automatic merges of the names `keys` into an entity of the project."""
    if not keys:
        return []
    rows = (await conn.execute(_STANDING, {"project_id": project_id, "keys": sorted(keys)})).all()
    return [ShortFormMerge(*row) for row in rows]

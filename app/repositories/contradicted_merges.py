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


# The documents owing that check (migration 0022): a row written with the document's graph merge when it relates
# two writings of a name, removed once the check is done; a worker sweeps the rows of documents no attempt is
# processing, each under a lease so two workers do not take one together (the undo is idempotent anyway).
_OWE = text("""
INSERT INTO contradiction_checks (project_id, document_id) VALUES (:project_id, :document_id)
ON CONFLICT (project_id, document_id) DO NOTHING
""")

_TAKE = text("""
UPDATE contradiction_checks c SET taken_at = now()
  FROM (SELECT p.project_id, p.document_id
          FROM contradiction_checks p
          JOIN documents d ON d.project_id = p.project_id AND d.id = p.document_id
         WHERE d.status NOT IN ('pending', 'processing')
           AND (p.taken_at IS NULL OR p.taken_at < now() - make_interval(secs => :lease))
         ORDER BY p.created_at, p.project_id, p.document_id
         LIMIT 1
           FOR UPDATE OF p SKIP LOCKED) AS t
 WHERE c.project_id = t.project_id AND c.document_id = t.document_id
RETURNING c.project_id, c.document_id
""")

_DONE = text("DELETE FROM contradiction_checks WHERE project_id = :project_id AND document_id = :document_id")


async def owe_check(conn: AsyncConnection, project_id: str, document_id: str) -> None:
    """In the document's merge transaction: its check for contradicted merges is owed until `checked`."""
    await conn.execute(_OWE, {"project_id": project_id, "document_id": document_id})


async def take_owed(conn: AsyncConnection, lease_seconds: float) -> tuple[str, str] | None:
    """One owed check of a document no attempt is processing, not taken by a live lease: (project, document),
    leased to the caller for `lease_seconds`; None when there is none."""
    row = (await conn.execute(_TAKE, {"lease": lease_seconds})).first()
    return (row[0], row[1]) if row is not None else None


async def checked(conn: AsyncConnection, project_id: str, document_id: str) -> None:
    """The document's check is done (by its own attempt or a sweep)."""
    await conn.execute(_DONE, {"project_id": project_id, "document_id": document_id})

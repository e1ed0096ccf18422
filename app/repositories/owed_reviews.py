"""SQL of the documents owing their resolution review (migration 0022): marked by the document's merge (in the
statement setting `graph_merged`, repositories/documents.py::set_fields), cleared by its final write once
processed (`documents.py::finish`), else swept by any worker for documents no attempt is processing, each taken
under a lease so two workers do not review one together (app/services/ingest/review_sweep.py). An update's row
(`update_of` set) owes the review of the document it updates: its swap merged into that document's nodes."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_TAKE = text("""
UPDATE documents d SET review_taken_at = now()
  FROM (SELECT o.project_id, o.id
          FROM documents o
         WHERE o.review_owed AND o.status NOT IN ('pending', 'processing')
           AND (o.review_taken_at IS NULL OR o.review_taken_at < now() - make_interval(secs => :lease))
         ORDER BY o.finished_at, o.project_id, o.id
         LIMIT 1
           FOR UPDATE OF o SKIP LOCKED) AS t
 WHERE d.project_id = t.project_id AND d.id = t.id
RETURNING d.project_id, d.id, coalesce(d.update_of, d.id)
""")

# Left owed when an attempt took the document up meanwhile (a retry): that attempt's final write clears it.
_REVIEWED = text("""
UPDATE documents SET review_owed = false, review_taken_at = NULL
 WHERE project_id = :project_id AND id = :document_id AND status NOT IN ('pending', 'processing')
""")


@dataclass(frozen=True)
class Owed:
    project_id: str
    row_id: str  # the row owing it: a document's, or an update's (`<id>@v<n>`)
    review_of: str  # the document whose nodes are reviewed: the row's own, or the one the update updates


async def take_owed(conn: AsyncConnection, lease_seconds: float) -> Owed | None:
    """One row owing its review that no attempt is processing and no live lease holds, leased to the caller for
    `lease_seconds`; None when there is none."""
    row = (await conn.execute(_TAKE, {"lease": lease_seconds})).first()
    return Owed(row[0], row[1], row[2]) if row is not None else None


async def reviewed(conn: AsyncConnection, project_id: str, document_id: str) -> None:
    """A sweep reviewed the document: nothing owed any more (unless an attempt took it up meanwhile)."""
    await conn.execute(_REVIEWED, {"project_id": project_id, "document_id": document_id})

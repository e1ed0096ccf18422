"""The removed chunks of an update, taken out of the graph exactly as a deletion takes out a document's.

The deletion's plan is made per chunk set: a document's deletion removes all of its chunks, an update only
those its new text no longer has. So this reuses the deletion service's planning (cached records of the
remaining chunks, the same rebuild rules, summaries and vectors prepared outside the locks) with a snapshot
of the removed chunks instead of the document's, and writes it on the update's own transaction.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories import deletion as repo
from app.repositories import document_versions as versions_repo
from app.repositories import graph as graph_repo
from app.repositories import graph_curation as curation_repo
from app.repositories import llm_cache as cache_repo
from app.services.cached_llm import CacheBatch
from app.services.deletion.service import DeletionService, Prepared, Snapshot


class ChunkRemoval(DeletionService):
    async def snapshot(self, conn: AsyncConnection, project_id: str, chunk_ids: list[str]) -> Snapshot:
        """What removing these chunks depends on; read under the key locks, it holds until commit."""
        keys, pairs = await versions_repo.keys_of_chunks(conn, project_id, chunk_ids)
        return Snapshot(
            keys=frozenset([*keys, *(k for pair in pairs for k in pair)]),
            doc_chunks=await versions_repo.chunk_refs(conn, project_id, chunk_ids),
            entities=await graph_repo.fetch_entities(conn, project_id, keys),
            relations=await graph_repo.fetch_relations(conn, project_id, pairs),
        )

    async def plan(
        self, conn: AsyncConnection, project_id: str, snapshot: Snapshot, batch: CacheBatch | None = None
    ) -> Prepared:
        """The rebuild of what the chunks supported; summaries through `batch` when given (under the locks)."""
        inputs = await self._inputs(conn, project_id, snapshot)
        return await self._prepare(project_id, snapshot, *inputs, batch=batch)

    async def apply(self, conn: AsyncConnection, project_id: str, p: Prepared) -> dict[str, int]:
        """Remove the chunks and write the rebuilt graph (the degree trigger stays on: the update's merge
        follows on the same transaction)."""
        plan = p.plan
        cascaded = await repo.pairs_touching(conn, project_id, plan.delete_entities)
        await versions_repo.delete_chunks(conn, project_id, sorted(p.snapshot.gone))
        await repo.delete_relations(conn, project_id, plan.delete_relations)
        await curation_repo.delete_entities(conn, project_id, plan.delete_entities)
        await repo.update_rebuilt_entities(conn, project_id, p.ent_rows, p.vectors[0])
        await repo.update_rebuilt_relations(conn, project_id, p.rel_rows, p.vectors[1])
        await cache_repo.delete_unreferenced(
            conn, project_id, [k for c in p.snapshot.doc_chunks for k in c.extraction_cache_keys]
        )
        return {
            "entities_deleted": len(plan.delete_entities),
            "entities_rebuilt": len(p.ent_rows),
            "relations_deleted": len(set(plan.delete_relations) | set(cascaded)),
            "relations_rebuilt": len(p.rel_rows),
        }

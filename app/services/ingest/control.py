"""Control of queued and running documents: cancel one, retry every failed one of a project, and clear a
project's query cache (keyword and answer caches; extraction and summary caches stay, so re-ingesting and
deletion rebuilds still find them)."""

from __future__ import annotations

from app.container import Container
from app.core.errors import Conflict, document_not_found
from app.repositories import documents as docs_repo
from app.repositories import llm_cache as cache_repo
from app.repositories import pipeline_events as events_repo
from app.schemas.documents import CancelResult, RetriedDocuments
from app.services.projects import require_project

# Cache types of query-time answers, by the `kind` a client names (see ChatRequest.cache_type).
QUERY_CACHE_TYPES = {"query": ["keywords", "query"]}


class QueueControl:
    def __init__(self, c: Container) -> None:
        self.c = c

    async def cancel(self, project_id: str, document_id: str) -> CancelResult:
        """A pending document is cancelled at once; a processing one is asked to stop before its merge
        (its worker checks between stages, at once while extracting, and under the merge's row lock)."""
        async with self.c.db.transaction() as conn:
            await require_project(conn, project_id)
            row = await docs_repo.request_cancel(conn, project_id, document_id)
            if row is None:
                raise document_not_found(document_id)
            status = row.status
            if status == "processing" and row.graph_merged:
                raise Conflict(
                    f"Document '{document_id}' has already merged into the graph, which cannot be "
                    "undone by a cancel; let it finish, then delete it",
                    code="document_merged",
                )
            if status not in ("pending", "processing"):
                raise Conflict(
                    f"Document '{document_id}' is {status}; only pending or processing documents can be cancelled",
                    code="document_not_cancellable",
                )
            if status == "pending":
                await events_repo.add(conn, [(project_id, document_id, "cancelled", "cancelled while pending")])
        if status == "processing" and self.c.worker is not None:
            self.c.worker.request_cancel(project_id, document_id)
        return CancelResult(
            id=document_id,
            status="cancelled" if status == "pending" else "processing",
            cancel_requested=status == "processing",
        )

    async def retry_failed(self, project_id: str) -> RetriedDocuments:
        async with self.c.db.transaction() as conn:
            await require_project(conn, project_id)
            ids = await docs_repo.retry(conn, project_id, statuses=("failed",))
            await events_repo.add(conn, [(project_id, i, "retried", "was failed") for i in ids])
        if ids and self.c.worker is not None:
            self.c.worker.notify()
        return RetriedDocuments(project_id=project_id, document_ids=ids)

    async def clear_query_cache(self, project_id: str, kind: str) -> int:
        async with self.c.db.transaction() as conn:
            await require_project(conn, project_id)
            return await cache_repo.delete_types(conn, project_id, QUERY_CACHE_TYPES[kind])

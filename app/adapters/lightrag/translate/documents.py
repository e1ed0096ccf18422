"""LightRAG Server's document operations on top of IngestionService and DeletionService: shape mapping only.

A LightRAG track id names the documents one insert request created; it is kept in each new document's
metadata (TRACK_ID_KEY) and reported as the document's `track_id`, not in its `metadata`.
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime

from app.adapters.lightrag.schemas import (
    LightragDeleteDocsResponse,
    LightragDocStatusOut,
    LightragInsertResponse,
    LightragPaginatedDocs,
    LightragPagination,
    LightragPipelineStatus,
    LightragStatusCounts,
    LightragTrackStatus,
)
from app.container import Container
from app.repositories import documents as docs_repo
from app.repositories import lightrag_documents as compat_repo
from app.repositories.lightrag_documents import TRACK_ID_KEY
from app.schemas.documents import IngestItem
from app.services.deletion.service import DeletionService
from app.services.ingest.intake import IngestionService, Submission, UploadedFile
from app.services.ingest.updates import DocumentUpdates
from app.services.projects import require_project

UNKNOWN_SOURCE = "unknown_source"  # LightRAG Server's file_path of a text sent without a source


def new_track_id(prefix: str) -> str:
    """LightRAG Server's format: `<prefix>_<UTC yyyymmdd_HHMMSS>_<8 hex>`."""
    return f"{prefix}_{datetime.now(UTC):%Y%m%d_%H%M%S}_{uuid.uuid4().hex[:8]}"


def _iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


def doc_status(row: dict) -> LightragDocStatusOut:
    metadata = dict(row.get("metadata") or {})
    track_id = metadata.pop(TRACK_ID_KEY, None)
    return LightragDocStatusOut(
        id=row["id"],
        content_summary=row.get("content_summary") or "",
        content_length=row["content_length"],
        status=row["status"],
        created_at=_iso(row["created_at"]),
        updated_at=_iso(row["updated_at"]),
        track_id=track_id if isinstance(track_id, str) else None,
        chunks_count=row.get("chunks_count"),
        error_msg=row.get("error"),
        metadata=metadata or None,
        file_path=row.get("file_path") or UNKNOWN_SOURCE,
    )


def status_counts(by_status: dict[str, int]) -> dict[str, int]:
    """Counts per status plus `all`, as LightRAG Server's document status storage reports them."""
    return {**by_status, "all": sum(by_status.values())}


def insert_response(items: list[IngestItem], track_id: str, what: str) -> LightragInsertResponse:
    new = [i for i in items if i.status == "pending"]
    duplicates = [i for i in items if i.status == "duplicate"]
    rejected = [i for i in items if i.status == "rejected"]
    if not new and rejected:  # not "already stored": refused (an update of a name several documents share...)
        reasons = "; ".join(str(i.error) for i in rejected)
        stored = f" ({len(duplicates)} already stored)" if duplicates else ""
        return LightragInsertResponse(
            status="failure", track_id="", message=f"{what}: nothing was enqueued{stored}: {reasons}"
        )
    if not new:
        listed = ", ".join(f"'{i.id}'" for i in duplicates)
        return LightragInsertResponse(
            status="duplicated", track_id="", message=f"Already in document storage: {listed}; nothing was enqueued."
        )
    if duplicates or rejected:
        notes = [f"{len(new)} enqueued"]
        if duplicates:
            notes.append(f"{len(duplicates)} already stored ({', '.join(str(i.id) for i in duplicates)})")
        if rejected:
            notes.append(f"{len(rejected)} rejected ({'; '.join(str(i.error) for i in rejected)})")
        return LightragInsertResponse(
            status="partial_success",
            track_id=track_id,
            message=f"{what}: {', '.join(notes)}. Processing will continue in background.",
        )
    return LightragInsertResponse(
        status="success",
        track_id=track_id,
        message=f"{what} successfully received. Processing will continue in background.",
    )


class LightragDocuments:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.ingestion = IngestionService(c)

    async def insert_texts(
        self, project_id: str, texts: list[str], sources: list[str | None], what: str
    ) -> LightragInsertResponse:
        self.ingestion.require_batch_size(len(texts), "texts")
        track_id = new_track_id("insert")
        items = [
            Submission(text=text, file_path=source, metadata={TRACK_ID_KEY: track_id})
            for text, source in zip(texts, sources, strict=True)
        ]
        # a text or file named as a stored document gives it new text: updated by chunk diff
        results, _ = await DocumentUpdates(self.c).enqueue(project_id, items, False, by_file_name=True)
        return insert_response(results, track_id, what)

    async def upload(self, project_id: str, upload: UploadedFile) -> LightragInsertResponse:
        track_id = new_track_id("upload")
        items = await self.ingestion.from_uploads([upload])
        for item in items:
            item.metadata = {TRACK_ID_KEY: track_id}
        # a text or file named as a stored document gives it new text: updated by chunk diff
        results, _ = await DocumentUpdates(self.c).enqueue(project_id, items, False, by_file_name=True)
        name = items[0].file_path if items else "upload"
        return insert_response(results, track_id, f"File '{name}' uploaded")

    async def paginated(
        self, project_id: str, status: str | None, page: int, page_size: int, sort_field: str, descending: bool
    ) -> LightragPaginatedDocs:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            rows, total = await compat_repo.page(
                conn, project_id, status, sort_field, descending, page_size, (page - 1) * page_size
            )
            by_status = await docs_repo.count_by_status(conn, project_id)
        pages = math.ceil(total / page_size)
        return LightragPaginatedDocs(
            documents=[doc_status(r) for r in rows],
            status_counts=status_counts(by_status),
            pagination=LightragPagination(
                page=page,
                page_size=page_size,
                total_count=total,
                total_pages=pages,
                has_next=page < pages,
                has_prev=page > 1,
            ),
        )

    async def counts(self, project_id: str) -> LightragStatusCounts:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            by_status = await docs_repo.count_by_status(conn, project_id)
        return LightragStatusCounts(status_counts=status_counts(by_status))

    async def track_status(self, project_id: str, track_id: str) -> LightragTrackStatus:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            rows = await compat_repo.by_track_id(conn, project_id, track_id)
        docs = [doc_status(r) for r in rows]
        summary: dict[str, int] = {}
        for doc in docs:
            summary[doc.status] = summary.get(doc.status, 0) + 1
        return LightragTrackStatus(track_id=track_id, documents=docs, total_count=len(docs), status_summary=summary)

    async def pipeline(self, project_id: str, visible: set[str] | None) -> LightragPipelineStatus:
        """The project's queue in LightRAG's pipeline vocabulary: busy while documents wait or run."""
        status = await self.ingestion.pipeline(project_id, visible)
        counts = status.by_status
        started = [d.started_at for d in status.in_flight if d.started_at is not None]
        busy = status.queue_depth > 0
        return LightragPipelineStatus(
            busy=busy,
            job_name="Indexing documents" if busy else "Default Job",
            job_start=_iso(min(started)) if started else None,
            docs=status.queue_depth,
            batchs=status.queue_depth,
            cur_batch=counts.processing,
            request_pending=counts.pending > 0,
            latest_message=(
                f"{counts.pending} pending, {counts.processing} processing, "
                f"{counts.processed} processed, {counts.failed} failed"
            ),
            history_messages=[],
            update_status={},
        )

    async def delete(self, project_id: str, doc_ids: list[str]) -> LightragDeleteDocsResponse:
        """Delete the documents together through the batch deletion: an unknown or processing one refuses the
        whole batch (404/409) and nothing is deleted. Done when this returns; LightRAG's status word is kept."""
        self.ingestion.require_batch_size(len(doc_ids), "document ids")
        report = await DeletionService(self.c).delete_documents(project_id, doc_ids)
        message = (
            f"Deleted {len(report.document_ids)} documents: {report.chunks_deleted} chunks, "
            f"{report.entities_deleted} entities and {report.relations_deleted} relations deleted, "
            f"{report.entities_rebuilt} entities and {report.relations_rebuilt} relations rebuilt."
        )
        return LightragDeleteDocsResponse(status="deletion_started", message=message, doc_id=", ".join(doc_ids))

"""Enqueueing documents (texts and uploaded files), waiting for them, and reading their state.

Ids are `doc-` + md5(sanitised text) unless given; a text whose id or content hash already exists in the
project (or earlier in the same request) is reported as `duplicate` with the existing id and does no work.
Invalid items get a per-item error while the others are taken; if none is valid the request is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core import metrics
from app.core.errors import (
    AppError,
    Conflict,
    EmbeddingNotConfigured,
    InvalidInput,
    LLMNotConfigured,
    PayloadTooLarge,
    document_not_found,
)
from app.core.usage import current_usage
from app.domain.document_rows import DocumentRow, DocumentState
from app.domain.names import BIDI_CONTROLS, strip_control
from app.repositories import chunks as chunks_repo
from app.repositories import documents as docs_repo
from app.repositories import graph as graph_repo
from app.repositories import pipeline_events as events_repo
from app.schemas.documents import (
    ChunkList,
    ChunkOut,
    DocumentList,
    DocumentOut,
    DocumentSummary,
    InFlight,
    IngestItem,
    PipelineEvent,
    PipelineStatus,
    ProviderBudgetUse,
    StatusCounts,
)
from app.services.projects import require_project

# Upper bound of a `wait=true` request; past it the request answers 202 with the statuses so far.
WAIT_LIMIT_SECONDS = 600.0
TERMINAL = ("processed", "failed", "cancelled")


def sanitize_text(text: str) -> str:
    """Trim and remove control characters (keeping tab, newline, carriage return) and lone surrogates."""
    return strip_control(text.strip()).strip()


def content_hash(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


# An uploaded file's name is kept to the length a JSON request's file_path may have (schemas/documents.py)
MAX_FILE_NAME = 1024


def canonical_path(file_path: str | None) -> str | None:
    cleaned = BIDI_CONTROLS.sub("", strip_control(re.sub(r"[\x00-\x1f]", "", file_path or ""))).strip()
    name = posixpath.basename(cleaned.replace("\\", "/"))
    if len(name) > MAX_FILE_NAME:  # cut the stem: the extension tells the parser the file's type
        stem, extension = posixpath.splitext(name)
        extension = extension if len(extension) <= 16 else ""
        name = stem[: MAX_FILE_NAME - len(extension)].rstrip() + extension
    return name.strip() or None


async def _require_document(conn: AsyncConnection, project_id: str, document_id: str) -> DocumentRow:
    row = await docs_repo.get(conn, project_id, document_id)
    if row is None:
        raise document_not_found(document_id)
    return row


Shown = TypeVar("Shown", DocumentSummary, DocumentOut)


def _shown(model: type[Shown], row: DocumentRow, counts: tuple[int, int]) -> Shown:
    """The document as the API shows it: the row's fields the model has, and the graph items it brought."""
    fields = {name: getattr(row, name) for name in model.model_fields if hasattr(row, name)}
    return model(**fields, entities_count=counts[0], relations_count=counts[1])


@dataclass
class Submission:
    """One item to ingest (from JSON or an uploaded file); `error` set when it was rejected early."""

    text: str = ""
    id: str | None = None
    file_path: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    too_large: bool = False


@dataclass(frozen=True)
class UploadedFile:
    """A file of an upload request: the name the client sent and a reader of up to `n` bytes of its body."""

    filename: str | None
    read: Callable[[int], Awaitable[bytes]]


@dataclass
class _Candidate:
    index: int
    id: str
    text: str
    hash: str
    file_path: str | None
    metadata: dict[str, Any]


class IngestionService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings

    # ----- enqueue -----
    def require_batch_size(self, count: int, what: str) -> None:
        """Refuse a request listing more items than MAX_DOCUMENTS_PER_REQUEST (before any is read)."""
        limit = self.settings.max_documents_per_request
        if count > limit:
            raise InvalidInput(f"At most {limit} {what} per request", code="too_many_documents")

    async def enqueue(self, project_id: str, items: list[Submission], wait: bool) -> tuple[list[IngestItem], bool]:
        """Store new documents as pending. Returns per-item results and whether all listed work is finished."""
        async with self.c.db.connect() as conn:
            await require_project(conn, project_id)
        if not self.c.llm.configured:  # every document would fail: say so now, store nothing
            raise LLMNotConfigured()
        if not self.c.embedder.configured:
            raise EmbeddingNotConfigured()
        results: list[IngestItem | None] = [None] * len(items)
        candidates = self._validate(items, results)
        if not candidates:
            reasons = "; ".join(f"#{i}: {r.error}" for i, r in enumerate(results) if r is not None)
            if all(item.too_large for item in items):
                raise PayloadTooLarge(f"No document was accepted: {reasons}", code="document_too_large")
            raise InvalidInput(f"No document was accepted: {reasons}", code="invalid_documents")

        fresh: list[_Candidate] = []
        batch_ids: set[str] = set()
        batch_hashes: dict[str, str] = {}
        for cand in candidates:
            original = cand.id if cand.id in batch_ids else batch_hashes.get(cand.hash)
            if original is not None:
                results[cand.index] = IngestItem(id=original, status="duplicate", file_path=cand.file_path)
                continue
            batch_ids.add(cand.id)
            batch_hashes[cand.hash] = cand.id
            fresh.append(cand)

        new_ids: list[str] = []
        async with self.c.db.transaction() as conn:
            inserted = await self._insert(conn, project_id, fresh)
            leftovers = [c for c in fresh if c.id not in inserted]
            existing = (
                await docs_repo.find_existing(conn, project_id, [c.id for c in leftovers], [c.hash for c in leftovers])
                if leftovers
                else []
            )
        by_id = {row.id: row.id for row in existing}
        by_hash = {row.content_hash: row.id for row in existing}
        for cand in fresh:
            if cand.id in inserted:
                new_ids.append(cand.id)
                results[cand.index] = IngestItem(id=cand.id, status="pending", file_path=cand.file_path)
            else:
                original = by_id.get(cand.id) or by_hash.get(cand.hash) or cand.id
                results[cand.index] = IngestItem(id=original, status="duplicate", file_path=cand.file_path)
        if self.c.worker is not None and new_ids:
            self.c.worker.notify()

        final = [r for r in results if r is not None]
        if not wait:
            return final, False
        listed = sorted({r.id for r in final if r.id and r.status in ("pending", "duplicate")})
        done, states = await self.wait_until_done(project_id, listed)
        self.charge_request(states, new_ids)
        for r in final:
            state = states.get(r.id or "")
            if state is not None and r.status == "pending":
                r.status = state.status
                r.error = state.error
        return final, done

    def _validate(self, items: list[Submission], results: list[IngestItem | None]) -> list[_Candidate]:
        out: list[_Candidate] = []
        limit = self.settings.max_document_chars
        for index, item in enumerate(items):
            path = canonical_path(item.file_path)
            text = sanitize_text(item.text) if item.error is None else ""
            error = item.error
            if error is None and not text:
                error = "empty or whitespace-only text"
            elif error is None and len(text) > limit:
                item.too_large = True
                error = f"text has {len(text)} characters, above the limit of {limit}"
            if error is not None:
                results[index] = IngestItem(id=item.id, status="rejected", error=error, file_path=path)
                continue
            digest = content_hash(text)
            out.append(_Candidate(index, item.id or f"doc-{digest}", text, digest, path, item.metadata or {}))
        return out

    async def _insert(self, conn, project_id: str, fresh: list[_Candidate]) -> set[str]:
        rows = [
            {
                "id": c.id,
                "status": "pending",
                "content": c.text,
                "content_hash": c.hash,
                "content_length": len(c.text),
                "file_path": c.file_path,
                "metadata": c.metadata,
            }
            for c in fresh
        ]
        return await docs_repo.insert_new(conn, project_id, rows)

    async def wait_until_done(
        self, project_id: str, ids: list[str], limit: float | None = None
    ) -> tuple[bool, dict[str, DocumentState]]:
        """Poll (woken early by the in-process worker) until every listed document is processed or failed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (WAIT_LIMIT_SECONDS if limit is None else limit)
        worker = self.c.worker
        while True:
            async with self.c.db.connect() as conn:
                states = await docs_repo.statuses(conn, project_id, ids)
            if all(s.status in TERMINAL for s in states.values()):
                return True, states
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False, states
            pause = min(remaining, self.settings.worker_poll_interval)
            if worker is not None:
                await worker.wait_for_change(pause)
            else:
                await asyncio.sleep(pause)

    @staticmethod
    def charge_request(states: Mapping[str, DocumentState | DocumentOut], new_ids: list[str]) -> None:
        """What processing the request's new documents spent counts for this request's usage (the token
        headers, or an MCP tool result's metadata with its LLM calls and embedding tokens)."""
        usage = current_usage()
        if usage is None:
            return
        for doc_id in new_ids:
            state = states.get(doc_id)
            if state is not None:
                usage.prompt_tokens += int(state.llm_prompt_tokens)
                usage.completion_tokens += int(state.llm_completion_tokens)
                usage.llm_calls += int(state.llm_calls)
                usage.embedding_tokens += int(state.embedding_tokens)

    async def from_uploads(self, files: list[UploadedFile]) -> list[Submission]:
        """Uploaded files as submissions: text extracted per type; unreadable or oversize files rejected."""
        from app.services.ingest.parsing import ParseLimits, extract_text_isolated  # noqa: PLC0415

        limit = self.settings.max_upload_bytes
        limits = ParseLimits(
            timeout=self.settings.parse_timeout,
            workers=self.settings.parse_workers,
            max_decompressed_bytes=self.settings.max_decompressed_bytes,
        )
        out: list[Submission] = []
        for upload in files:
            name = canonical_path(upload.filename) or "upload"
            data = await upload.read(limit + 1)
            if len(data) > limit:
                out.append(
                    Submission(file_path=name, too_large=True, error=f"file is larger than the limit of {limit} bytes")
                )
                continue
            try:
                text = await extract_text_isolated(name, data, limits)
            except AppError as exc:
                out.append(Submission(file_path=name, error=exc.detail))
                continue
            out.append(Submission(text=text, file_path=name))
        return out

    # ----- reads -----
    async def get(self, project_id: str, document_id: str) -> DocumentOut:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            row = await _require_document(conn, project_id, document_id)
            counts = await graph_repo.document_graph_counts(conn, project_id, [document_id])
        return _shown(DocumentOut, row, counts[document_id])

    async def list_documents(self, project_id: str, status: str | None, limit: int, offset: int) -> DocumentList:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            rows, total = await docs_repo.list_page(conn, project_id, status, limit, offset)
            counts = await graph_repo.document_graph_counts(conn, project_id, [r.id for r in rows])
            by_status = await docs_repo.count_by_status(conn, project_id)
        docs = [_shown(DocumentSummary, r, counts[r.id]) for r in rows]
        return DocumentList(documents=docs, total=total, counts=StatusCounts(**by_status))

    async def chunks(self, project_id: str, document_id: str) -> ChunkList:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            await _require_document(conn, project_id, document_id)
            rows = await chunks_repo.list_for_document(conn, project_id, document_id)
        return ChunkList(
            document_id=document_id,
            chunks=[
                ChunkOut(
                    id=r["id"],
                    order=r["order_index"],
                    tokens=r["tokens"],
                    start_token=r["start_token"],
                    end_token=r["end_token"],
                    content=r["content"],
                )
                for r in rows
            ],
        )

    async def pipeline(self, project_id: str, visible: set[str] | None = None) -> PipelineStatus:
        """The project's queue; `visible` (a scoped key's projects) bounds what the shared figures reveal."""
        async with self.c.db.connect() as conn:
            await require_project(conn, project_id)
            by_status = await docs_repo.count_by_status(conn, project_id)
            flying = await docs_repo.in_flight(conn, project_id)
            global_depth = await docs_repo.queue_depth(conn, visible)
            events = await events_repo.recent(conn, project_id)
            metrics.set_queue_gauges(await docs_repo.count_by_status(conn))
        budget = await self.c.budget.refresh_metrics()
        worker = self.c.worker
        local = None
        if worker is not None and visible is None:  # the local worker's figures span every project
            local = {
                "id": worker.id,
                "in_flight": len(worker.in_flight),
                "max_parallel": self.settings.max_parallel_insert,
                "finished": worker.processed,
            }
        return PipelineStatus(
            project_id=project_id,
            queue_depth=by_status["pending"] + by_status["processing"],
            global_queue_depth=global_depth,
            by_status=StatusCounts(**by_status),
            in_flight=[InFlight.model_validate(r, from_attributes=True) for r in flying],
            local_worker=local,
            recent_events=[PipelineEvent(**e) for e in events],
            budget=[ProviderBudgetUse(**b) for b in budget],
        )

    # ----- retry -----
    async def retry(self, project_id: str, document_id: str) -> IngestItem:
        async with self.c.db.transaction() as conn:
            await require_project(conn, project_id)
            row = await _require_document(conn, project_id, document_id)
            if not await docs_repo.retry(conn, project_id, document_id):
                raise Conflict(
                    f"Document '{document_id}' is {row.status}; only failed or cancelled documents can be retried",
                    code="document_not_failed",
                )
            await events_repo.add(conn, [(project_id, document_id, "retried", f"was {row.status}")])
        if self.c.worker is not None:
            self.c.worker.notify()
        return IngestItem(id=document_id, status="pending", file_path=row.file_path)

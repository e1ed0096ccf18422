"""Documents routes: thin HTTP mapping over IngestionService."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, File, Form, Header, Path, Query, Request, UploadFile
from fastapi.responses import JSONResponse, StreamingResponse

from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.deletion import BatchDeleteRequest, BatchDeletion, DocumentDeletion
from app.schemas.documents import (
    DOCUMENT_ID_PATTERN,
    UPLOAD_EXAMPLE,
    CancelResult,
    ChunkList,
    DocumentList,
    DocumentOut,
    DocumentStatus,
    IngestItem,
    IngestRequest,
    IngestResponse,
    PipelineStatus,
    RetriedDocuments,
    RetryRequest,
)
from app.services.deletion.service import DeletionService
from app.services.ingest.control import QueueControl
from app.services.ingest.feed import PipelineFeed
from app.services.ingest.intake import IngestionService, Submission, UploadedFile
from app.services.ingest.updates import DocumentUpdates
from app.web.auth import ProjectScopedRoute, principal_of
from app.web.deps import ContainerDep, ProjectQuery
from app.web.disconnects import EventStream
from app.web.openapi import MODELS_UNAVAILABLE, errors
from app.web.sse import keep_alive, sse_event
from app.web.upload_stream import UploadRoute

router = APIRouter(tags=["documents"], route_class=ProjectScopedRoute, responses=errors(503))

DocumentPath = Annotated[str, Path(pattern=DOCUMENT_ID_PATTERN)]
_INGEST_RESPONSES: dict = {
    200: {"model": IngestResponse, "description": "wait=true: every listed document is processed or failed"},
    **errors(
        404,
        MODELS_UNAVAILABLE,
        (
            413,
            "Every item is over the size limit (`document_too_large`), or the body is larger "
            "than MAX_REQUEST_BYTES (`payload_too_large`)",
        ),
        (
            422,
            "No valid item (`invalid_documents`), more items than MAX_DOCUMENTS_PER_REQUEST "
            "(`too_many_documents`) or invalid fields (`validation_error`)",
        ),
    ),
}
_UNKNOWN_DOCUMENT = (404, "Unknown project or document (`project_not_found`, `document_not_found`)")


def _service(c: ContainerDep) -> IngestionService:
    return IngestionService(c)


def _answer(items: list[IngestItem], done: bool) -> JSONResponse:
    body = IngestResponse(documents=items).model_dump(mode="json")
    return JSONResponse(body, status_code=200 if done else 202)


@router.post("/documents", status_code=202, response_model=IngestResponse, responses=_INGEST_RESPONSES)
async def ingest_texts(body: IngestRequest, c: ContainerDep) -> JSONResponse:
    service = _service(c)
    service.require_batch_size(len(body.documents), "documents")
    items = [Submission(text=d.text, id=d.id, file_path=d.file_path, metadata=d.metadata or {}) for d in body.documents]
    return _answer(*await DocumentUpdates(c).enqueue(body.project_id, items, body.wait))


async def ingest_files(
    c: ContainerDep,
    files: Annotated[list[UploadFile], File(description=".txt, .md, .pdf, .docx, .html files")],
    project_id: Annotated[str, Form(pattern=PROJECT_ID_PATTERN)] = "default",
    wait: Annotated[bool, Form()] = False,
    update: Annotated[
        bool, Form(description="A file named as a document of the project updates that document (by chunk diff).")
    ] = False,
) -> JSONResponse:
    service = _service(c)
    service.require_batch_size(len(files), "files")
    uploads = [UploadedFile(f.filename, f.read) for f in files]
    submissions = await service.from_uploads(uploads)
    return _answer(*await DocumentUpdates(c).enqueue(project_id, submissions, wait, by_file_name=update))


# files are cut at MAX_UPLOAD_BYTES while the body streams (app/web/upload_stream.py)
router.add_api_route(
    "/documents/upload",
    ingest_files,
    methods=["POST"],
    status_code=202,
    response_model=IngestResponse,
    openapi_extra=UPLOAD_EXAMPLE,
    route_class_override=UploadRoute,
    responses={**_INGEST_RESPONSES, **errors((400, "The multipart body could not be parsed (`bad_request`)"))},
)


@router.get("/documents", response_model=DocumentList, responses=errors(404))
async def list_documents(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    status: DocumentStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
) -> DocumentList:
    return await _service(c).list_documents(project_id, status, limit, offset)


@router.get("/documents/{document_id}", response_model=DocumentOut, responses=errors(_UNKNOWN_DOCUMENT))
async def get_document(document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default") -> DocumentOut:
    return await _service(c).get(project_id, document_id)


@router.get("/documents/{document_id}/chunks", response_model=ChunkList, responses=errors(_UNKNOWN_DOCUMENT))
async def get_document_chunks(
    document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default"
) -> ChunkList:
    return await _service(c).chunks(project_id, document_id)


@router.delete(
    "/documents/{document_id}",
    response_model=DocumentDeletion,
    responses=errors(_UNKNOWN_DOCUMENT, (409, "Still processing (`document_processing`)"), MODELS_UNAVAILABLE),
)
async def delete_document(
    document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default"
) -> DocumentDeletion:
    return await DeletionService(c).delete_document(project_id, document_id)


@router.post(
    "/documents/delete",
    response_model=BatchDeletion,
    responses=errors(
        _UNKNOWN_DOCUMENT,
        (409, "One of them is still processing (`document_processing`)"),
        (422, "More ids than MAX_DOCUMENTS_PER_REQUEST (`too_many_documents`) or invalid fields (`validation_error`)"),
        MODELS_UNAVAILABLE,
    ),
)
async def delete_documents(body: BatchDeleteRequest, c: ContainerDep) -> BatchDeletion:
    """Delete several documents with one plan and one rebuild: each entity or relation they touched is
    rebuilt (and summarised) once."""
    _service(c).require_batch_size(len(body.document_ids), "document ids")
    return await DeletionService(c).delete_documents(body.project_id, body.document_ids)


@router.post("/documents/retry-failed", response_model=RetriedDocuments, responses=errors(404))
async def retry_failed_documents(
    c: ContainerDep, body: Annotated[RetryRequest | None, Body()] = None
) -> RetriedDocuments:
    """Put every failed document of the project back in the queue."""
    return await QueueControl(c).retry_failed((body or RetryRequest()).project_id)


@router.post(
    "/documents/{document_id}/cancel",
    response_model=CancelResult,
    responses={
        202: {
            "model": CancelResult,
            "description": "Processing: its worker stops it before its merge; it then ends `cancelled`",
        },
        **errors(
            _UNKNOWN_DOCUMENT,
            (
                409,
                "Already merged into the graph (`document_merged`), or neither pending nor "
                "processing (`document_not_cancellable`)",
            ),
        ),
    },
)
async def cancel_document(
    document_id: DocumentPath, c: ContainerDep, body: Annotated[RetryRequest | None, Body()] = None
) -> JSONResponse:
    """Cancel a pending document (at once) or a processing one (before its graph merge). Its cached
    extractions are kept: a retry does not ask the LLM again for the chunks already extracted."""
    result = await QueueControl(c).cancel((body or RetryRequest()).project_id, document_id)
    return JSONResponse(result.model_dump(mode="json"), status_code=202 if result.cancel_requested else 200)


@router.post(
    "/documents/{document_id}/retry",
    response_model=IngestItem,
    responses=errors(
        _UNKNOWN_DOCUMENT, (409, "Only failed or cancelled documents can be retried (`document_not_failed`)")
    ),
)
async def retry_document(
    document_id: DocumentPath, c: ContainerDep, body: Annotated[RetryRequest | None, Body()] = None
) -> IngestItem:
    return await _service(c).retry((body or RetryRequest()).project_id, document_id)


@router.get("/pipeline", response_model=PipelineStatus, responses=errors(404), name="get_pipeline_status")
async def pipeline_status(c: ContainerDep, request: Request, project_id: ProjectQuery = "default") -> PipelineStatus:
    return await _service(c).pipeline(project_id, principal_of(request).allowed_projects)


_EVENTS_DOC = {
    200: {
        "description": 'Server-Sent Events, one JSON object per `data:` line: `{"type": "event", '
        '"id", "document_id", "kind", "detail", "created_at"}` (with an SSE '
        '`id:`, for `Last-Event-ID`), `{"type": "progress", …}` (a processing '
        'document\'s stage and figures, when they change) and `{"type": "idle", '
        '"document_id"}`; a `: keep-alive` comment every SSE_KEEPALIVE_INTERVAL idle '
        "seconds. Resumed with `Last-Event-ID`, every newer event follows in order, or, "
        'when some were pruned from the log, first `{"type": "reset", "reason": '
        '"events_pruned"}` (with the newest `id:`): reload `GET /pipeline`. The last '
        'message is `{"type": "end", "reason": "project_deleted"}` when the '
        "project is deleted (`shutting_down` when the server stops).",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    **errors(
        404,
        (
            429,
            "This key already has PIPELINE_STREAMS_PER_KEY streams open "
            "(`too_many_streams`), or the server PIPELINE_STREAMS_MAX (`streams_full`)",
        ),
    ),
}


@router.get("/pipeline/events", response_class=StreamingResponse, responses=_EVENTS_DOC, name="follow_pipeline")
async def pipeline_events(
    c: ContainerDep,
    request: Request,
    project_id: ProjectQuery = "default",
    last_event_id: Annotated[int | None, Header(ge=0, le=2**62, description="Resume after this event id")] = None,
) -> StreamingResponse:
    """Follow the project's pipeline without polling: events as they happen and live progress."""
    feed, key = PipelineFeed(c), principal_of(request).key
    resume = await feed.open(project_id, last_event_id, key)

    async def events():
        async for payload, event_id in feed.follow(project_id, resume):
            yield sse_event(payload, event_id)

    return EventStream(
        keep_alive(events(), c.settings.sse_keepalive_interval),
        c.settings.stream_send_timeout,
        on_close=lambda: feed.close(key),
    )

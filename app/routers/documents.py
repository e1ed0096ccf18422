"""Documents routes: thin HTTP mapping over IngestionService."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, File, Form, Path, Query, Request, UploadFile
from fastapi.responses import JSONResponse

from app.auth import ProjectScopedRoute, principal_of
from app.deps import ContainerDep, ProjectQuery
from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.deletion import DocumentDeletion
from app.schemas.documents import (
    DOCUMENT_ID_PATTERN,
    ChunkList,
    DocumentList,
    DocumentOut,
    DocumentStatus,
    IngestItem,
    IngestRequest,
    IngestResponse,
    PipelineStatus,
    RetryRequest,
)
from app.services.graph.deletion import DeletionService
from app.services.ingest.intake import IngestionService, Submission

router = APIRouter(tags=["documents"], route_class=ProjectScopedRoute)

DocumentPath = Annotated[str, Path(pattern=DOCUMENT_ID_PATTERN)]
_INGEST_RESPONSES: dict = {
    200: {"model": IngestResponse, "description": "wait=true: every listed document is processed or failed"},
    404: {"description": "Unknown project"},
    413: {"description": "Every item is larger than the limit"},
    422: {"description": "No valid item, or more items than MAX_DOCUMENTS_PER_REQUEST"},
}


def _service(c: ContainerDep) -> IngestionService:
    return IngestionService(c)


def _answer(items: list[IngestItem], done: bool) -> JSONResponse:
    body = IngestResponse(documents=items).model_dump(mode="json")
    return JSONResponse(body, status_code=200 if done else 202)


@router.post("/documents", status_code=202, response_model=IngestResponse, responses=_INGEST_RESPONSES)
async def ingest_texts(body: IngestRequest, c: ContainerDep) -> JSONResponse:
    service = _service(c)
    service.require_batch_size(len(body.documents), "documents")
    items = [Submission(text=d.text, id=d.id, file_path=d.file_path, metadata=d.metadata or {})
             for d in body.documents]
    return _answer(*await service.enqueue(body.project_id, items, body.wait))


@router.post("/documents/upload", status_code=202, response_model=IngestResponse, responses=_INGEST_RESPONSES)
async def ingest_files(
    c: ContainerDep,
    files: Annotated[list[UploadFile], File(description=".txt, .md, .pdf, .docx, .html files")],
    project_id: Annotated[str, Form(pattern=PROJECT_ID_PATTERN)] = "default",
    wait: Annotated[bool, Form()] = False,
) -> JSONResponse:
    service = _service(c)
    service.require_batch_size(len(files), "files")
    return _answer(*await service.enqueue(project_id, await service.from_uploads(files), wait))


@router.get("/documents", response_model=DocumentList, responses={404: {"description": "Unknown project"}})
async def list_documents(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    status: DocumentStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
) -> DocumentList:
    return await _service(c).list_documents(project_id, status, limit, offset)


@router.get("/documents/{document_id}", response_model=DocumentOut,
            responses={404: {"description": "Unknown project or document"}})
async def get_document(document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default") -> DocumentOut:
    return await _service(c).get(project_id, document_id)


@router.get("/documents/{document_id}/chunks", response_model=ChunkList,
            responses={404: {"description": "Unknown project or document"}})
async def get_document_chunks(
    document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default"
) -> ChunkList:
    return await _service(c).chunks(project_id, document_id)


@router.delete("/documents/{document_id}", response_model=DocumentDeletion,
               responses={404: {"description": "Unknown project or document"},
                          409: {"description": "Still processing"}})
async def delete_document(
    document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default"
) -> DocumentDeletion:
    return await DeletionService(c).delete_document(project_id, document_id)


@router.post("/documents/{document_id}/retry", response_model=IngestItem,
             responses={404: {"description": "Unknown project or document"}, 409: {"description": "Not failed"}})
async def retry_document(
    document_id: DocumentPath, c: ContainerDep, body: Annotated[RetryRequest | None, Body()] = None
) -> IngestItem:
    return await _service(c).retry((body or RetryRequest()).project_id, document_id)


@router.get("/pipeline", response_model=PipelineStatus, responses={404: {"description": "Unknown project"}})
async def pipeline_status(c: ContainerDep, request: Request, project_id: ProjectQuery = "default") -> PipelineStatus:
    return await _service(c).pipeline(project_id, principal_of(request).allowed_projects)

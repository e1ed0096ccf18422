"""LightRAG Server's /documents routes: thin HTTP mapping over app/adapters/lightrag/translate/documents.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Path, Request, UploadFile

from app.adapters.lightrag.routes.common import NOT_SUPPORTED, ROUTER_ERRORS, TAG, WorkspaceProject
from app.adapters.lightrag.schemas import (
    LightragDeleteDocs,
    LightragDeleteDocsResponse,
    LightragDocumentsRequest,
    LightragInsertResponse,
    LightragInsertText,
    LightragInsertTexts,
    LightragPaginatedDocs,
    LightragPipelineStatus,
    LightragStatusCounts,
    LightragTrackStatus,
)
from app.adapters.lightrag.translate.documents import LightragDocuments
from app.adapters.lightrag.translate.unsupported import NotSupported
from app.core.errors import InvalidInput
from app.schemas.common import SafeStr
from app.services.ingest.intake import UploadedFile
from app.web.auth import ProjectScopedRoute, principal_of
from app.web.deps import ContainerDep
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(prefix="/documents", tags=[TAG], route_class=ProjectScopedRoute, responses=ROUTER_ERRORS)

_INSERT_ERRORS = errors(
    MODELS_UNAVAILABLE,
    (
        413,
        "Every item is over the size limit (`document_too_large`) "
        "or the body is over MAX_REQUEST_BYTES (`payload_too_large`)",
    ),
    (
        422,
        "No valid text (`invalid_documents`), more than MAX_DOCUMENTS_PER_REQUEST texts "
        "(`too_many_documents`) or invalid fields (`validation_error`)",
    ),
)
_UPLOAD_EXAMPLE = {
    "requestBody": {
        "content": {
            "multipart/form-data": {
                "example": {"file": "# Onboarding\n\nAlice Chen leads the platform team in Berlin."}
            }
        }
    }
}


@router.post("/text", response_model=LightragInsertResponse, responses=_INSERT_ERRORS, name="lightrag_insert_text")
async def insert_text(
    body: LightragInsertText, project_id: WorkspaceProject, c: ContainerDep
) -> LightragInsertResponse:
    return await LightragDocuments(c).insert_texts(project_id, [body.text], [body.file_source], "Text")


@router.post("/texts", response_model=LightragInsertResponse, responses=_INSERT_ERRORS, name="lightrag_insert_texts")
async def insert_texts(
    body: LightragInsertTexts, project_id: WorkspaceProject, c: ContainerDep
) -> LightragInsertResponse:
    sources: list[str | None] = list(body.file_sources or [])
    sources += [None] * (len(body.texts) - len(sources))  # LightRAG pads missing sources the same way
    if len(sources) > len(body.texts):
        raise InvalidInput(f"{len(sources)} file_sources for {len(body.texts)} texts", code="validation_error")
    return await LightragDocuments(c).insert_texts(project_id, body.texts, sources, "Texts")


@router.post(
    "/upload",
    response_model=LightragInsertResponse,
    openapi_extra=_UPLOAD_EXAMPLE,
    responses={**_INSERT_ERRORS, **errors((400, "The multipart body could not be parsed (`bad_request`)"))},
    name="lightrag_upload",
)
async def upload(
    file: Annotated[UploadFile, File(description="One .txt, .md, .pdf, .docx or .html file")],
    project_id: WorkspaceProject,
    c: ContainerDep,
) -> LightragInsertResponse:
    return await LightragDocuments(c).upload(project_id, UploadedFile(file.filename, file.read))


@router.post("/paginated", response_model=LightragPaginatedDocs, name="lightrag_documents_paginated")
async def paginated(
    body: LightragDocumentsRequest, project_id: WorkspaceProject, c: ContainerDep
) -> LightragPaginatedDocs:
    return await LightragDocuments(c).paginated(
        project_id, body.status_filter, body.page, body.page_size, body.sort_field, body.sort_direction == "desc"
    )


@router.get("/status_counts", response_model=LightragStatusCounts, name="lightrag_status_counts")
async def status_counts(project_id: WorkspaceProject, c: ContainerDep) -> LightragStatusCounts:
    return await LightragDocuments(c).counts(project_id)


@router.get("/pipeline_status", response_model=LightragPipelineStatus, name="lightrag_pipeline_status")
async def pipeline_status(project_id: WorkspaceProject, c: ContainerDep, request: Request) -> LightragPipelineStatus:
    return await LightragDocuments(c).pipeline(project_id, principal_of(request).allowed_projects)


@router.get("/track_status/{track_id}", response_model=LightragTrackStatus, name="lightrag_track_status")
async def track_status(
    track_id: Annotated[SafeStr, Path(min_length=1, max_length=200)], project_id: WorkspaceProject, c: ContainerDep
) -> LightragTrackStatus:
    return await LightragDocuments(c).track_status(project_id, track_id.strip())


@router.delete(
    "/delete_document",
    response_model=LightragDeleteDocsResponse,
    name="lightrag_delete_documents",
    responses=errors(
        (404, "Unknown project or document: nothing deleted (`document_not_found`)"),
        (409, "One is still processing: nothing deleted (`document_processing`)"),
        NOT_SUPPORTED,
        MODELS_UNAVAILABLE,
    ),
)
async def delete_documents(
    body: LightragDeleteDocs, project_id: WorkspaceProject, c: ContainerDep
) -> LightragDeleteDocsResponse:
    if body.delete_llm_cache:
        raise NotSupported(
            "delete_llm_cache: this service keeps cached extractions (a deletion rebuilds the graph from them)"
        )
    return await LightragDocuments(c).delete(project_id, body.doc_ids)

"""Routes of documents that change: PUT /documents/{id} (an update by chunk diff) and its versions."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.routers.documents import DocumentPath
from app.schemas.document_versions import DocumentUpdateRequest, DocumentUpdateResult, DocumentVersions
from app.services.ingest.updates import DocumentUpdates, UpdateInput, update_and_wait
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep, ProjectQuery
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(tags=["documents"], route_class=ProjectScopedRoute, responses=errors(503))

_UNKNOWN_DOCUMENT = (404, "Unknown project or document (`project_not_found`, `document_not_found`)")


@router.put(
    "/documents/{document_id}",
    response_model=DocumentUpdateResult,
    status_code=202,
    responses={
        200: {"model": DocumentUpdateResult, "description": "Unchanged text, or wait=true and the update finished"},
        **errors(
            _UNKNOWN_DOCUMENT,
            (
                409,
                "Not processed yet (`document_processing`, `document_not_processed`), another update in "
                "progress (`update_in_progress`) or another document has this text (`duplicate_content`)",
            ),
            (413, "The text is over MAX_DOCUMENT_CHARS (`document_too_large`)"),
            (422, "Empty text (`invalid_documents`), an update's own id (`not_a_document`) or invalid fields"),
            MODELS_UNAVAILABLE,
        ),
    },
)
async def update_document(document_id: DocumentPath, body: DocumentUpdateRequest, c: ContainerDep) -> JSONResponse:
    """Give the document new text. Only the chunks that changed are extracted; what the removed chunks alone
    supported leaves the graph. The current version answers until the update is applied."""
    item = UpdateInput(body.text, body.file_path, body.metadata)
    result, done = await update_and_wait(c, body.project_id, document_id, item, body.wait)
    return JSONResponse(result.model_dump(mode="json"), status_code=200 if done else 202)


@router.get("/documents/{document_id}/versions", response_model=DocumentVersions, responses=errors(_UNKNOWN_DOCUMENT))
async def document_versions(
    document_id: DocumentPath, c: ContainerDep, project_id: ProjectQuery = "default"
) -> DocumentVersions:
    """The versions the document has had (since its first update) and its queued update, if any."""
    return await DocumentUpdates(c).versions(project_id, document_id)

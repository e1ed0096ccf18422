"""Export routes: the project's graph as a streamed file download."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.auth import ProjectScopedRoute
from app.deps import ContainerDep, ProjectQuery
from app.services.export import FORMATS, ExportFormat, ExportOptions, ExportService
from app.services.projects import ProjectService

router = APIRouter(tags=["export"], route_class=ProjectScopedRoute)

_DOWNLOADS = {spec.media_type: {"schema": {"type": "string", "format": "binary"}} for spec in FORMATS.values()}


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The graph as a file attachment (csv = zip of one CSV per table)", "content": _DOWNLOADS},
        404: {"description": "Unknown project"},
    },
)
async def export_graph(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    fmt: Annotated[ExportFormat, Query(alias="format", description="csv (zip), xlsx, md, txt or json")] = (
        ExportFormat.csv
    ),
    include_vectors: Annotated[bool, Query(description="Add each item's embedding as a JSON array")] = False,
    include_chunks: Annotated[bool, Query(description="Add the project's chunks")] = False,
) -> StreamingResponse:
    service = ExportService(c.db, ProjectService(c.db, c.settings))
    download = await service.download(project_id, ExportOptions(fmt, include_vectors, include_chunks))
    return StreamingResponse(
        download.body,
        media_type=download.media_type,
        headers={
            "Content-Disposition": f'attachment; filename="{download.filename}"',
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )

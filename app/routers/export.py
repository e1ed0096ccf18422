"""Export routes: the project's graph as a streamed file download (capped and timed: app/web/downloads.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from app.services.export import FORMATS, ExportFormat, ExportOptions, ExportService
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep, ProjectQuery
from app.web.downloads import ExportResponse, busy, export_gate
from app.web.openapi import errors

router = APIRouter(tags=["export"], route_class=ProjectScopedRoute)

_FILE = {"type": "string", "format": "binary"}
# the json export is one JSON object (counts, entities, relations, ...); the other formats are files
_DOWNLOADS = {
    spec.media_type: {"schema": {"type": "object"} if spec.media_type == "application/json" else _FILE}
    for spec in FORMATS.values()
}


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The graph as a file attachment (csv = zip of one CSV per table)", "content": _DOWNLOADS},
        **errors(404),
        503: {
            **errors(503)[503],
            "description": "Too many exports running at once (`export_busy`): retry after `Retry-After` s; or "
            "the database is unavailable (`database_unavailable`)",
            "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
        },
    },
)
async def export_graph(
    request: Request,
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    fmt: Annotated[ExportFormat, Query(alias="format", description="csv (zip), xlsx, md, txt or json")] = (
        ExportFormat.csv
    ),
    include_vectors: Annotated[bool, Query(description="Add each item's embedding as a JSON array")] = False,
    include_chunks: Annotated[bool, Query(description="Add the project's chunks")] = False,
) -> Response:
    service = ExportService(c)
    download = await service.download(project_id, ExportOptions(fmt, include_vectors, include_chunks))
    gate = export_gate(request, c.settings.export_max_concurrent)
    if not gate.try_enter():
        await download.body.aclose()
        return busy(gate.limit)
    return ExportResponse(download, gate, c.settings.export_send_timeout)

"""LightRAG Server's /query, /query/stream (NDJSON) and /query/data: thin HTTP mapping over
app/adapters/lightrag/translate/query.py. A client that disconnects cancels its query (see app/web/disconnects.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from app.adapters.chat.routing import ndjson_stream
from app.adapters.lightrag.routes.common import NOT_SUPPORTED, ROUTER_ERRORS, TAG, WorkspaceProject
from app.adapters.lightrag.schemas import LightragQueryData, LightragQueryRequest, LightragQueryResponse
from app.adapters.lightrag.translate.query import LightragQuery
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep
from app.web.disconnects import unless_client_leaves
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(tags=[TAG], route_class=ProjectScopedRoute, responses=ROUTER_ERRORS)

_QUERY_ERRORS = errors(
    499,
    NOT_SUPPORTED,
    MODELS_UNAVAILABLE,
    (
        422,
        "Invalid fields (`validation_error`), limits over the service's caps (`query_limits`) "
        "or an invalid LIGHTRAG-WORKSPACE header (`invalid_workspace`)",
    ),
)
_NDJSON = {
    200: {
        "description": 'NDJSON lines: `{"references": [...]}` first (include_references), then '
        '`{"response": "..."}` pieces; `{"error": "..."}` if the LLM fails '
        "mid-stream. `stream: false`: one line with both.",
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    },
    **_QUERY_ERRORS,
}


@router.post("/query", response_model=LightragQueryResponse, responses=_QUERY_ERRORS, name="lightrag_query")
async def query(
    body: LightragQueryRequest, project_id: WorkspaceProject, c: ContainerDep, request: Request
) -> LightragQueryResponse:
    return await unless_client_leaves(request.receive, LightragQuery(c).answer(project_id, body))


@router.post("/query/stream", response_class=StreamingResponse, responses=_NDJSON, name="lightrag_query_stream")
async def query_stream(
    body: LightragQueryRequest, project_id: WorkspaceProject, c: ContainerDep, request: Request
) -> StreamingResponse:
    lines = await unless_client_leaves(request.receive, LightragQuery(c).stream_lines(project_id, body))
    return ndjson_stream(lines, c.settings.stream_send_timeout)


@router.post("/query/data", response_model=LightragQueryData, responses=_QUERY_ERRORS, name="lightrag_query_data")
async def query_data(
    body: LightragQueryRequest, project_id: WorkspaceProject, c: ContainerDep, request: Request
) -> LightragQueryData:
    return await unless_client_leaves(request.receive, LightragQuery(c).data(project_id, body))

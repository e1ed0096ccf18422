"""Query routes: JSON answers, or Server-Sent Events when streaming. A client that disconnects cancels its
query wherever it is (see app/disconnects.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from app.auth import ProjectScopedRoute
from app.deps import ContainerDep
from app.disconnects import EventStream, unless_client_leaves
from app.errors import AppError
from app.schemas.query import QueryRequest, QueryResponse
from app.services.query.service import QueryService

router = APIRouter(tags=["query"], route_class=ProjectScopedRoute)

_SSE_DOC = {
    200: {
        "description": "JSON answer, or (stream=true) Server-Sent Events: `data: {\"type\": \"chunk\", \"text\": …}` "
                       "events, then one `data: {\"type\": \"done\", \"mode\", \"keywords\", \"context\", "
                       "\"references\", \"prompt\", \"usage\"}` event (`{\"type\": \"error\", …}` if the LLM fails "
                       "mid-stream).",
        "content": {"text/event-stream": {"itemSchema": {
            "type": "object", "required": ["data"],
            "properties": {"data": {"type": "string", "contentMediaType": "application/json"},
                           "event": {"type": "string"}, "id": {"type": "string"}},
        }}},
    },
    404: {"description": "Unknown project"},
    422: {"description": "Invalid mode, non-positive or too large limits, oversized query or history"},
    503: {"description": "LLM or embedding provider unavailable"},
}


def _event(payload: dict) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


async def _sse(service: QueryService, body: QueryRequest, request: Request) -> StreamingResponse:
    prepared, deltas = await unless_client_leaves(request.receive, service.stream(body))

    async def events() -> AsyncGenerator[str, None]:
        try:
            async with contextlib.aclosing(deltas):
                async for delta in deltas:
                    yield _event({"type": "chunk", "text": delta})
        except AppError as exc:  # headers are already sent: report in-band
            yield _event({"type": "error", "detail": exc.detail, "code": exc.code})
            return
        yield _event({"type": "done", **service.final_event(prepared)})

    return EventStream(events())


@router.post("/query", response_model=QueryResponse, responses=_SSE_DOC)
async def query(body: QueryRequest, c: ContainerDep, request: Request) -> QueryResponse | StreamingResponse:
    service = QueryService(c)
    if body.stream:
        return await _sse(service, body, request)
    return await unless_client_leaves(request.receive, service.query(body))


@router.post("/query/stream", response_class=StreamingResponse, responses=_SSE_DOC)
async def query_stream(body: QueryRequest, c: ContainerDep, request: Request) -> StreamingResponse:
    return await _sse(QueryService(c), body, request)

"""Query routes: JSON answers, or Server-Sent Events when streaming. A client that disconnects cancels its
query wherever it is (see app/web/disconnects.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from app.core.config import Settings
from app.core.errors import AppError
from app.schemas.query import QueryRequest, QueryResponse
from app.services.query.service import QueryService
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep
from app.web.disconnects import EventStream, unless_client_leaves
from app.web.openapi import MODELS_UNAVAILABLE, errors
from app.web.sse import keep_alive

router = APIRouter(tags=["query"], route_class=ProjectScopedRoute)

_SSE_DOC = {
    200: {
        "description": 'JSON answer, or (stream=true) Server-Sent Events: `data: {"type": "chunk", "text": …}` '
        'events (citation markers rewritten as `[n]`), then one `data: {"type": "done", "response", "mode", '
        '"keywords", "context", "references", "claims", "prompt", "usage"}` event — `response` is the whole '
        "answer that the claims' offsets index (a references list the model wrote left out) — "
        '(`{"type": "error", …}` if the LLM fails mid-stream).',
        # One event's schema: before OpenAPI 3.2 (`itemSchema`), an event stream's `schema` describes each event.
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "required": ["data"],
                    "properties": {
                        "data": {"type": "string", "contentMediaType": "application/json"},
                        "event": {"type": "string"},
                        "id": {"type": "string"},
                    },
                }
            }
        },
    },
    **errors(
        404,
        499,
        MODELS_UNAVAILABLE,
        (
            422,
            "Invalid mode, non-positive or too large limits (`query_limits`), oversized query or history, "
            "or other invalid fields (`validation_error`)",
        ),
    ),
}


def _event(payload: dict) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


async def _sse(service: QueryService, body: QueryRequest, request: Request, settings: Settings) -> StreamingResponse:
    """A retrieval that answers within the keep-alive interval fails with an HTTP status as usual; a slower
    one gets its stream opened at once, with keep-alive comments until the answer starts (errors in-band)."""
    interval = settings.sse_keepalive_interval
    preparing = asyncio.ensure_future(service.stream(body))
    try:
        await unless_client_leaves(request.receive, asyncio.wait((preparing,), timeout=interval))
    except BaseException:
        preparing.cancel()
        raise
    if preparing.done():
        prepared, deltas = preparing.result()
        return EventStream(keep_alive(_answer(service, prepared, deltas), interval), settings.stream_send_timeout)

    async def late() -> AsyncGenerator[str, None]:
        try:
            prepared, deltas = await preparing
        except AppError as exc:
            yield _event({"type": "error", "detail": exc.detail, "code": exc.code})
            return
        finally:
            preparing.cancel()  # no-op once done; stops the retrieval if the client left first
        async for event in _answer(service, prepared, deltas):
            yield event

    return EventStream(keep_alive(late(), interval), settings.stream_send_timeout)


async def _answer(service: QueryService, prepared, deltas) -> AsyncGenerator[str, None]:
    try:
        async with contextlib.aclosing(deltas):
            async for delta in deltas:
                yield _event({"type": "chunk", "text": delta})
    except AppError as exc:  # headers are already sent: report in-band
        yield _event({"type": "error", "detail": exc.detail, "code": exc.code})
        return
    await service.cite(prepared)
    yield _event({"type": "done", **service.final_event(prepared)})


@router.post("/query", response_model=QueryResponse, responses=_SSE_DOC, name="run_query")
async def query(body: QueryRequest, c: ContainerDep, request: Request) -> QueryResponse | StreamingResponse:
    service = QueryService(c)
    if body.stream:
        return await _sse(service, body, request, c.settings)
    return await unless_client_leaves(request.receive, service.query(body))


@router.post("/query/stream", response_class=StreamingResponse, responses=_SSE_DOC, name="stream_query")
async def query_stream(body: QueryRequest, c: ContainerDep, request: Request) -> StreamingResponse:
    return await _sse(QueryService(c), body, request, c.settings)

"""Ollama-compatible chat routes (/api/version, /api/tags, /api/chat, /api/generate): chat clients such as
Open WebUI talk to a project as to an Ollama model. The model name picks the project (and the key's scope
is checked against it); a leading /local, /global, … in the question picks the mode."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from app.auth import principal_of, unscoped
from app.deps import ContainerDep
from app.disconnects import unless_client_leaves
from app.openapi import MODELS_UNAVAILABLE, errors
from app.routers.chat_common import ndjson_stream, protocol_route
from app.schemas.chat_ollama import (
    OllamaChatRequest,
    OllamaChatResponse,
    OllamaGenerateRequest,
    OllamaGenerateResponse,
    OllamaTags,
    OllamaVersion,
)
from app.services.chat import ollama_format
from app.services.chat.answer import start_answer
from app.services.chat.conversation import ChatQuery, ChatTurn, chat_query
from app.services.chat.models import available_models, project_for_model


def _ollama_error(status: int, detail: str | list[dict[str, Any]], code: str) -> dict[str, Any]:
    return ollama_format.error_body(detail, code)


router = APIRouter(prefix="/api", tags=["ollama"], route_class=protocol_route(_ollama_error),
                   responses=errors(MODELS_UNAVAILABLE))

_ANSWER_DOC = errors(
    (404, "Unknown model: neither `lightrag:<project>` of an existing project nor the default project's plain "
          "name (`model_not_found`)"),
    499,
    (422, "No user message (`no_user_message`), an empty question (`empty_query`), a question or history over "
          "the query limits (`query_limits`), or invalid fields (`validation_error`)"),
)


def _doc(model: type, summary: str) -> dict[int | str, dict[str, Any]]:
    return {200: {"model": model, "description": summary, "content": {"application/x-ndjson": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}, **_ANSWER_DOC}


def _chat_project(body: OllamaChatRequest, c: ContainerDep) -> str:
    return project_for_model(body.model, c.settings.ollama_model_name)


def _generate_project(body: OllamaGenerateRequest, c: ContainerDep) -> str:
    return project_for_model(body.model, c.settings.ollama_model_name)


@router.get("/version", response_model=OllamaVersion, name="ollama_version")
@unscoped
async def version() -> dict[str, str]:
    return ollama_format.version()


@router.get("/tags", response_model=OllamaTags, name="ollama_tags")
@unscoped  # lists only the projects the key may use
async def tags(c: ContainerDep, request: Request) -> JSONResponse:
    models = await available_models(c, principal_of(request).allowed_projects)
    return JSONResponse(ollama_format.tags(models))


async def _answer(query: ChatQuery, stream: bool, endpoint: ollama_format.Endpoint, c: ContainerDep,
                  request: Request, started: int) -> JSONResponse | StreamingResponse:
    answer = await unless_client_leaves(request.receive, start_answer(c, query, started))
    if stream:
        return ndjson_stream(ollama_format.ndjson_lines(endpoint, answer), c.settings.stream_send_timeout)
    text = await unless_client_leaves(request.receive, answer.text())
    return JSONResponse(ollama_format.done(endpoint, answer.model, answer.stats, text))


@router.post("/chat", response_model=OllamaChatResponse, name="ollama_chat",
             responses=_doc(OllamaChatResponse, "One JSON object (`stream: false`), or NDJSON lines: the answer's "
                                                "pieces (`done: false`), then a `done: true` line with the counters"))
async def chat(body: OllamaChatRequest, project_id: Annotated[str, Depends(_chat_project)], c: ContainerDep,
               request: Request) -> JSONResponse | StreamingResponse:
    started = time.perf_counter_ns()
    turns = [ChatTurn(m.role, m.content) for m in body.messages]
    query = chat_query(body.model, project_id, turns, max_history=c.settings.max_history_messages)
    return await _answer(query, body.stream is not False, "chat", c, request, started)


@router.post("/generate", response_model=OllamaGenerateResponse, name="ollama_generate",
             responses=_doc(OllamaGenerateResponse, "One JSON object (`stream: false`), or NDJSON lines: the "
                                                    "answer's pieces, then a `done: true` line with the counters"))
async def generate(body: OllamaGenerateRequest, project_id: Annotated[str, Depends(_generate_project)],
                   c: ContainerDep, request: Request) -> JSONResponse | StreamingResponse:
    started = time.perf_counter_ns()
    query = chat_query(body.model, project_id, [ChatTurn("user", body.prompt)], max_history=0)
    return await _answer(query, body.stream is not False, "generate", c, request, started)

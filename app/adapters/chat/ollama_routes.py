"""Ollama-compatible chat routes (/api/version, /api/tags, /api/show, /api/ps, /api/chat, /api/generate): chat
clients such as Open WebUI talk to a project as to an Ollama model. The model name picks the project (and the
key's scope is checked against it); a leading /local, /global, … in the question picks the mode.

As Ollama does, a body is read as JSON whatever its content type: Ollama's documented `curl -d '{...}'`
examples send it labelled as a form."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from app.adapters.chat.answering import ollama_format
from app.adapters.chat.answering.answer import start_answer
from app.adapters.chat.answering.conversation import ChatQuery, ChatTurn, chat_query
from app.adapters.chat.answering.models import ChatModel, available_models, model_not_found, project_for_model
from app.adapters.chat.ollama_models import OllamaRunning, OllamaShow, OllamaShowRequest
from app.adapters.chat.ollama_schemas import (
    OllamaChatRequest,
    OllamaChatResponse,
    OllamaGenerateRequest,
    OllamaGenerateResponse,
    OllamaTags,
    OllamaVersion,
)
from app.adapters.chat.routing import ndjson_stream, protocol_route
from app.core.errors import NotFound
from app.services.projects import ProjectService
from app.web.auth import principal_of, unscoped
from app.web.deps import ContainerDep
from app.web.disconnects import unless_client_leaves
from app.web.openapi import MODELS_UNAVAILABLE, errors

_NOT_JSON = "the request body is not valid JSON"
_NOT_OBJECT = 'the request body must be a JSON object, such as {"model": "lightrag", ...}'


def _field_error(error: dict[str, Any]) -> dict[str, Any]:
    """A validation error of the body as a person would say it: where the JSON broke, or which field."""
    loc = list(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        at = f" (at character {loc[1]})" if len(loc) > 1 else ""
        return {**error, "loc": ["body"], "msg": f"{_NOT_JSON}{at}"}
    if loc == ["body"]:  # absent, or JSON that is not an object
        return {**error, "msg": _NOT_OBJECT}
    return error


def _ollama_error(status: int, detail: str | list[dict[str, Any]], code: str) -> dict[str, Any]:
    if isinstance(detail, list):
        detail = [_field_error(e) for e in detail]
        message = "; ".join(
            e["msg"] if e["loc"] == ["body"] else f"{'.'.join(map(str, e['loc'][1:]))}: {e['msg']}" for e in detail
        )
        return {**ollama_format.error_body(detail, code), "error": message}
    return ollama_format.error_body(detail, code)


def _read_as_json(request: Request) -> Request:
    """The request with its body labelled JSON, so the route parses it whatever the client called it."""
    if request.method != "POST":
        return request
    headers = [(k, v) for k, v in request.scope["headers"] if k != b"content-type"]
    return Request({**request.scope, "headers": [*headers, (b"content-type", b"application/json")]}, request.receive)


class _OllamaRoute(protocol_route(_ollama_error)):  # type: ignore[misc]
    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(_read_as_json(request))

        return handle


router = APIRouter(prefix="/api", tags=["ollama"], route_class=_OllamaRoute, responses=errors(MODELS_UNAVAILABLE))

_ANSWER_DOC = errors(
    (
        404,
        "Unknown model: neither `lightrag:<project>` of an existing project nor the default project's plain "
        "name (`model_not_found`)",
    ),
    499,
    (
        422,
        "No user message (`no_user_message`), an empty question (`empty_query`), a question or history over "
        "the query limits (`query_limits`), or invalid fields (`validation_error`)",
    ),
)


def _doc(model: type, summary: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {
            "model": model,
            "description": summary,
            "content": {"application/x-ndjson": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
        },
        **_ANSWER_DOC,
    }


def _chat_project(body: OllamaChatRequest, c: ContainerDep) -> str:
    return project_for_model(body.model, c.settings.ollama_model_name)


def _generate_project(body: OllamaGenerateRequest, c: ContainerDep) -> str:
    return project_for_model(body.model, c.settings.ollama_model_name)


def _show_project(body: OllamaShowRequest, c: ContainerDep) -> str:
    return project_for_model(body.model_name, c.settings.ollama_model_name)


@router.get("/version", response_model=OllamaVersion, name="ollama_version")
@unscoped
async def version() -> dict[str, str]:
    return ollama_format.version()


@router.get("/tags", response_model=OllamaTags, name="ollama_tags")
@unscoped  # lists only the projects the key may use
async def tags(c: ContainerDep, request: Request) -> JSONResponse:
    models = await available_models(c, principal_of(request).allowed_projects)
    return JSONResponse(ollama_format.tags(models))


@router.post(
    "/show",
    response_model=OllamaShow,
    name="ollama_show",
    responses=errors(
        (404, "Unknown model (`model_not_found`)"), (422, "No model named, or invalid fields (`validation_error`)")
    ),
)
async def show(
    body: OllamaShowRequest, project_id: Annotated[str, Depends(_show_project)], c: ContainerDep
) -> JSONResponse:
    """The model of a project, in Ollama's shape (clients ask it before chatting)."""
    try:
        project = await ProjectService(c).get(project_id)
    except NotFound as exc:
        raise model_not_found(body.model_name) from exc
    model = ChatModel(body.model_name, project.id, project.updated_at)
    return JSONResponse(ollama_format.show(model, c.settings.llm_context_window))


@router.get("/ps", response_model=OllamaRunning, name="ollama_ps")
@unscoped  # lists only the projects the key may use
async def running(c: ContainerDep, request: Request) -> JSONResponse:
    """The models ready to answer: every project's (nothing is loaded or unloaded here)."""
    models = await available_models(c, principal_of(request).allowed_projects)
    return JSONResponse(ollama_format.running(models, c.settings.llm_context_window))


async def _answer(
    query: ChatQuery, stream: bool, endpoint: ollama_format.Endpoint, c: ContainerDep, request: Request, started: int
) -> JSONResponse | StreamingResponse:
    answer = await unless_client_leaves(request.receive, start_answer(c, query, started))
    if stream:
        return ndjson_stream(ollama_format.ndjson_lines(endpoint, answer), c.settings.stream_send_timeout)
    text = await unless_client_leaves(request.receive, answer.text())
    return JSONResponse(ollama_format.done(endpoint, answer.model, answer.stats, text))


@router.post(
    "/chat",
    response_model=OllamaChatResponse,
    name="ollama_chat",
    responses=_doc(
        OllamaChatResponse,
        "One JSON object (`stream: false`), or NDJSON lines: the answer's "
        "pieces (`done: false`), then a `done: true` line with the counters",
    ),
)
async def chat(
    body: OllamaChatRequest, project_id: Annotated[str, Depends(_chat_project)], c: ContainerDep, request: Request
) -> JSONResponse | StreamingResponse:
    started = time.perf_counter_ns()
    turns = [ChatTurn(m.role, m.content) for m in body.messages]
    query = chat_query(body.model, project_id, turns, max_history=c.settings.max_history_messages)
    return await _answer(query, body.stream is not False, "chat", c, request, started)


@router.post(
    "/generate",
    response_model=OllamaGenerateResponse,
    name="ollama_generate",
    responses=_doc(
        OllamaGenerateResponse,
        "One JSON object (`stream: false`), or NDJSON lines: the "
        "answer's pieces, then a `done: true` line with the counters",
    ),
)
async def generate(
    body: OllamaGenerateRequest,
    project_id: Annotated[str, Depends(_generate_project)],
    c: ContainerDep,
    request: Request,
) -> JSONResponse | StreamingResponse:
    started = time.perf_counter_ns()
    query = chat_query(body.model, project_id, [ChatTurn("user", body.prompt)], max_history=0)
    return await _answer(query, body.stream is not False, "generate", c, request, started)

"""OpenAI-compatible chat routes (/v1/models, /v1/chat/completions): OpenAI SDKs and chat clients talk to a
project as to a model. The model name picks the project (and the key's scope is checked against it); a
leading /local, /global, … in the question picks the mode."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from app.adapters.chat.answering import openai_format
from app.adapters.chat.answering.answer import start_answer
from app.adapters.chat.answering.conversation import ChatTurn, chat_query
from app.adapters.chat.answering.models import available_models, project_for_model
from app.adapters.chat.openai_schemas import ChatCompletion, ModelList, OpenAIChatRequest
from app.adapters.chat.routing import protocol_route, sse_stream
from app.web.auth import principal_of, unscoped
from app.web.deps import ContainerDep
from app.web.disconnects import unless_client_leaves
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(
    prefix="/v1",
    tags=["openai"],
    route_class=protocol_route(openai_format.error_body),
    responses=errors(MODELS_UNAVAILABLE),
)

_COMPLETION_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A chat completion, or (`stream: true`) Server-Sent Events: `chat.completion.chunk` "
        "objects, a usage chunk when `stream_options.include_usage`, then `data: [DONE]`",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "required": ["data"],
                    "properties": {"data": {"type": "string"}, "event": {"type": "string"}, "id": {"type": "string"}},
                }
            }
        },
    },
    **errors(
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
    ),
}


def _project(body: OpenAIChatRequest, c: ContainerDep) -> str:
    return project_for_model(body.model, c.settings.ollama_model_name)


@router.get("/models", response_model=ModelList, name="openai_models")
@unscoped  # lists only the projects the key may use
async def models(c: ContainerDep, request: Request) -> JSONResponse:
    found = await available_models(c, principal_of(request).allowed_projects)
    return JSONResponse(openai_format.model_list(found))


@router.post(
    "/chat/completions", response_model=ChatCompletion, responses=_COMPLETION_DOC, name="openai_chat_completions"
)
async def chat_completions(
    body: OpenAIChatRequest, project_id: Annotated[str, Depends(_project)], c: ContainerDep, request: Request
) -> JSONResponse | StreamingResponse:
    started = time.perf_counter_ns()
    turns = [ChatTurn(m.role, m.text) for m in body.messages]
    query = chat_query(body.model, project_id, turns, max_history=c.settings.max_history_messages)
    answer = await unless_client_leaves(request.receive, start_answer(c, query, started))
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return sse_stream(openai_format.sse_events(answer, include_usage=include_usage), c.settings.stream_send_timeout)
    text = await unless_client_leaves(request.receive, answer.text())
    return JSONResponse(openai_format.Completion(answer).whole(text))

"""Answers in OpenAI's shapes: chat completions (SSE chunks when streaming, `data: [DONE]` last), the model
list, and errors as {"error": {message, type, param, code}} (plus the service's own detail and code)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from app.adapters.chat.answering.answer import AnswerStats, ChatAnswer
from app.adapters.chat.answering.models import ChatModel
from app.adapters.chat.answering.ollama_format import error_message
from app.core.errors import AppError

OWNER = "lightrag-service"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
}


def usage(stats: AnswerStats) -> dict[str, int]:
    return {
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": stats.prompt_tokens + stats.completion_tokens,
    }


class Completion:
    """One chat completion's id, creation time and model, shared by all its chunks."""

    def __init__(self, answer: ChatAnswer) -> None:
        self.answer = answer
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def whole(self, text: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.answer.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": usage(self.answer.stats),
        }

    def chunk(
        self, delta: dict[str, Any], finish_reason: str | None = None, *, include_usage: bool = False
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.answer.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }
        if include_usage:
            body["usage"] = None  # only the extra last chunk carries it
        return body

    def usage_chunk(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.answer.model,
            "choices": [],
            "usage": usage(self.answer.stats),
        }


def _event(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


async def sse_events(answer: ChatAnswer, *, include_usage: bool) -> AsyncGenerator[str, None]:
    """The role chunk, one chunk per piece, the finishing chunk, the usage chunk when asked for, [DONE].
    A failure after the first event is reported in-band as an error event, which the OpenAI SDK raises."""
    completion = Completion(answer)
    yield _event(completion.chunk({"role": "assistant", "content": ""}, include_usage=include_usage))
    try:
        async for text in answer.pieces():
            yield _event(completion.chunk({"content": text}, include_usage=include_usage))
    except AppError as exc:
        yield _event(error_body(exc.status_code, exc.detail, exc.code))
        return
    yield _event(completion.chunk({}, "stop", include_usage=include_usage))
    if include_usage:
        yield _event(completion.usage_chunk())
    yield _event("[DONE]")


def model_list(models: list[ChatModel]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": m.name, "object": "model", "created": int(m.modified_at.timestamp()), "owned_by": OWNER}
            for m in models
        ],
    }


def error_body(status: int, detail: str | list[dict[str, Any]], code: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {
        "error": {"message": error_message(detail), "type": kind, "param": None, "code": code},
        "detail": detail,
        "code": code,
    }

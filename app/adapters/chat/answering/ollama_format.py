"""Answers in Ollama's shapes: /api/chat and /api/generate objects (NDJSON lines when streaming), /api/tags,
/api/show, /api/ps, /api/version, and errors as {"error": message} (plus the service's own detail and code)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from app.adapters.chat.answering.answer import AnswerStats, ChatAnswer
from app.adapters.chat.answering.models import ChatModel
from app.core.errors import AppError

# The Ollama API version these routes follow (clients such as Open WebUI ask for it).
OLLAMA_API_VERSION = "0.9.3"
MODEL_FAMILY = "lightrag"
_NEVER_UNLOADED = timedelta(days=100 * 365)  # /api/ps: when Ollama would unload the model

Endpoint = Literal["chat", "generate"]


def timestamp() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _body(endpoint: Endpoint, model: str, text: str) -> dict[str, Any]:
    head: dict[str, Any] = {"model": model, "created_at": timestamp()}
    if endpoint == "chat":
        return {**head, "message": {"role": "assistant", "content": text}}
    return {**head, "response": text}


def piece(endpoint: Endpoint, model: str, text: str) -> dict[str, Any]:
    return {**_body(endpoint, model, text), "done": False}


def done(endpoint: Endpoint, model: str, stats: AnswerStats, text: str = "") -> dict[str, Any]:
    """The last object of a stream (`text` empty) or the whole answer, with Ollama's counters."""
    return {
        **_body(endpoint, model, text),
        "done": True,
        "done_reason": "stop",
        "total_duration": stats.total_duration,
        "load_duration": stats.load_duration,
        "prompt_eval_count": stats.prompt_tokens,
        "prompt_eval_duration": stats.prompt_eval_duration,
        "eval_count": stats.completion_tokens,
        "eval_duration": stats.eval_duration,
    }


def _line(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False) + "\n"


async def ndjson_lines(endpoint: Endpoint, answer: ChatAnswer) -> AsyncGenerator[str, None]:
    """One line per piece of the answer, then the `done` line; a failure after the first line is reported
    in-band as {"error": …}, as Ollama does."""
    try:
        async for text in answer.pieces():
            yield _line(piece(endpoint, answer.model, text))
    except AppError as exc:
        yield _line(error_body(exc.detail, exc.code))
        return
    yield _line(done(endpoint, answer.model, answer.stats))


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "",
        "family": MODEL_FAMILY,
        "families": [MODEL_FAMILY],
        "parameter_size": "",
        "quantization_level": "",
    }


def _digest(model: ChatModel) -> str:
    return hashlib.sha256(model.name.encode()).hexdigest()


def tags(models: list[ChatModel]) -> dict[str, Any]:
    return {
        "models": [
            {
                "name": m.name,
                "model": m.name,
                "modified_at": m.modified_at.isoformat(),
                "size": 0,
                "digest": _digest(m),
                "details": _details(),
            }
            for m in models
        ]
    }


def show(model: ChatModel, context_window: int) -> dict[str, Any]:
    """/api/show: the model as a project answering through the service's LLM (no weights, template or license
    of its own)."""
    info: dict[str, Any] = {"general.architecture": MODEL_FAMILY, "general.basename": model.project_id}
    if context_window:
        info[f"{MODEL_FAMILY}.context_length"] = context_window
    return {
        "modelfile": f"# LightRAG project '{model.project_id}'\nFROM {model.name}\n",
        "parameters": "",
        "template": "",
        "license": "",
        "details": _details(),
        "model_info": info,
        "capabilities": ["completion"],
        "modified_at": model.modified_at.isoformat(),
    }


def running(models: list[ChatModel], context_window: int) -> dict[str, Any]:
    """/api/ps: every model the caller may use is always ready (nothing to load into memory)."""
    expires = (datetime.now(UTC) + _NEVER_UNLOADED).isoformat()
    return {
        "models": [
            {
                "name": m.name,
                "model": m.name,
                "size": 0,
                "digest": _digest(m),
                "details": _details(),
                "expires_at": expires,
                "size_vram": 0,
                "context_length": context_window or None,
            }
            for m in models
        ]
    }


def version() -> dict[str, str]:
    return {"version": OLLAMA_API_VERSION}


def error_body(detail: str | list[dict[str, Any]], code: str) -> dict[str, Any]:
    return {"error": error_message(detail), "detail": detail, "code": code}


def error_message(detail: str | list[dict[str, Any]]) -> str:
    """A validation error's field list as one line; other details as they are."""
    if isinstance(detail, str):
        return detail
    return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in detail)

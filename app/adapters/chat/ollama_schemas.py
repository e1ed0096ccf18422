"""Requests and responses of the Ollama-compatible routes (/api/...), in Ollama's field names. Fields Ollama
clients send that do not apply here (options, format, keep_alive, images, tools, think) are accepted and
ignored."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import MAX_CHAT_MESSAGES, MaxItems, SafeStr

MODEL_FIELD = Field(
    ...,
    min_length=1,
    max_length=200,
    description="`lightrag:<project>`, or the default project's plain name (OLLAMA_MODEL_NAME)",
)
STREAM_FIELD = Field(True, description="NDJSON lines (the default, also for null), or one JSON object when false")


class OllamaMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str = Field(..., max_length=32, description="`user`, `assistant`, `system` (others are left out)")
    content: SafeStr = ""


class OllamaChatRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {
                    "model": "lightrag",
                    "messages": [
                        {"role": "user", "content": "Where is the platform team based?"},
                        {"role": "assistant", "content": "In Berlin."},
                        {"role": "user", "content": "/local Who leads it?"},
                    ],
                    "stream": False,
                }
            ]
        },
    )

    model: SafeStr = MODEL_FIELD
    messages: Annotated[list[OllamaMessage], MaxItems(MAX_CHAT_MESSAGES)] = Field(
        default_factory=list,
        description="The last user message is the question; a leading /local, /global, "
        "/hybrid, /mix, /naive, /bypass or /context picks the mode. Only the "
        "latest MAX_HISTORY_MESSAGES earlier ones are used.",
    )
    stream: bool | None = STREAM_FIELD


class OllamaGenerateRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {
                    "model": "lightrag:handbook",
                    "prompt": "/hybrid Who leads the platform team?",
                    "stream": False,
                }
            ]
        },
    )

    model: SafeStr = MODEL_FIELD
    prompt: SafeStr = Field("", description="The question; a leading mode prefix picks the mode")
    stream: bool | None = STREAM_FIELD


class OllamaAssistantMessage(BaseModel):
    role: str
    content: str


class _OllamaAnswer(BaseModel):
    model: str
    created_at: str
    done: bool
    done_reason: str | None = Field(None, description="`stop`; only on the last object")
    total_duration: int | None = Field(None, description="Nanoseconds from request to end of answer")
    load_duration: int | None = Field(None, description="Nanoseconds spent retrieving the context")
    prompt_eval_count: int | None = Field(None, description="LLM prompt tokens the request spent")
    prompt_eval_duration: int | None = Field(None, description="Nanoseconds from retrieval to the first piece")
    eval_count: int | None = Field(None, description="LLM completion tokens the request spent")
    eval_duration: int | None = Field(None, description="Nanoseconds from the first piece to the end")


class OllamaChatResponse(_OllamaAnswer):
    message: OllamaAssistantMessage


class OllamaGenerateResponse(_OllamaAnswer):
    response: str


class OllamaModelDetails(BaseModel):
    parent_model: str
    format: str
    family: str
    families: list[str]
    parameter_size: str
    quantization_level: str


class OllamaModel(BaseModel):
    name: str
    model: str
    modified_at: datetime
    size: int
    digest: str
    details: OllamaModelDetails


class OllamaTags(BaseModel):
    models: list[OllamaModel]


class OllamaVersion(BaseModel):
    version: str

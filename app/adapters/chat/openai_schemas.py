"""Requests and responses of the OpenAI-compatible routes (/v1/...). Sampling and tool fields OpenAI clients
send (temperature, max_tokens, tools, n, …) are accepted and ignored."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from app.schemas.common import MAX_CHAT_MESSAGES, MAX_CONTENT_PARTS, MaxItems, SafeStr


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str = Field(..., max_length=64)
    text: SafeStr | None = Field(None, description="Text parts are read; images and other parts are left out")


def _content_kind(value: Any) -> str:
    return "parts" if isinstance(value, list) else "text"


# A string, or a list of parts; tagged so that errors name `text` or `parts` rather than validator internals.
MessageContent = Annotated[
    Annotated[SafeStr, Tag("text")] | Annotated[list[ContentPart], MaxItems(MAX_CONTENT_PARTS), Tag("parts")],
    Discriminator(_content_kind),
]


class OpenAIMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str = Field(
        ..., max_length=32, description="`user`, `assistant`, `system`, `developer` (tool messages are left out)"
    )
    content: MessageContent | None = None

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text or "" for part in self.content if part.type == "text")
        return self.content or ""


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = False


class OpenAIChatRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {
                    "model": "lightrag:handbook",
                    "messages": [
                        {"role": "user", "content": "Where is the platform team based?"},
                        {"role": "assistant", "content": "In Berlin."},
                        {"role": "user", "content": "/local Who leads it?"},
                    ],
                    "stream": True,
                    "stream_options": {"include_usage": True},
                }
            ]
        },
    )

    model: SafeStr = Field(
        ...,
        min_length=1,
        max_length=200,
        description="`lightrag:<project>`, or the default project's plain name (OLLAMA_MODEL_NAME)",
    )
    messages: Annotated[list[OpenAIMessage], MaxItems(MAX_CHAT_MESSAGES)] = Field(
        ...,
        description="The last user message is the question; a leading /local, /global, /hybrid, /mix, /naive, "
        "/bypass or /context picks the mode. Only the latest MAX_HISTORY_MESSAGES earlier ones "
        "are used.",
    )
    stream: bool | None = False
    stream_options: StreamOptions | None = None


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: str
    content: str


class CompletionChoice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: str = "chat.completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: CompletionUsage


class ModelCard(BaseModel):
    id: str
    object: str = "model"
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: str = "list"
    data: list[ModelCard]

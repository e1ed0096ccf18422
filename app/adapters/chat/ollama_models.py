"""Requests and responses of the Ollama-compatible model routes /api/show and /api/ps, in Ollama's field names
(what the official clients read; fields that mean nothing here are empty or zero)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.adapters.chat.ollama_schemas import OllamaModelDetails


class OllamaShowRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra={"examples": [{"model": "lightrag:handbook"}]})

    model: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="`lightrag:<project>`, or the default project's plain name (OLLAMA_MODEL_NAME)",
    )
    name: str | None = Field(None, min_length=1, max_length=200, description="The same, as older clients send it")
    verbose: bool | None = None

    @model_validator(mode="after")
    def _named(self) -> OllamaShowRequest:
        if self.model is None and self.name is None:
            raise ValueError("name the model: `model` is required")
        return self

    @property
    def model_name(self) -> str:
        return self.model or self.name or ""


class OllamaShow(BaseModel):
    modelfile: str
    parameters: str
    template: str
    license: str
    details: OllamaModelDetails
    model_info: dict[str, Any] = Field(
        description="`general.architecture` (`lightrag`), `general.basename` (the "
        "project), and `lightrag.context_length` when LLM_CONTEXT_WINDOW "
        "is known"
    )
    capabilities: list[str] = Field(description="`completion`: /api/chat and /api/generate")
    modified_at: datetime = Field(description="The project's last change")


class OllamaRunningModel(BaseModel):
    name: str
    model: str
    size: int
    digest: str
    details: OllamaModelDetails
    expires_at: datetime = Field(description="Far in the future: a project's model is never unloaded")
    size_vram: int
    context_length: int | None = Field(None, description="LLM_CONTEXT_WINDOW, when known")


class OllamaRunning(BaseModel):
    models: list[OllamaRunningModel]

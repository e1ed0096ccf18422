"""Chat model names ↔ projects. Every project is the model "lightrag:<project>"; the default project is also
the plain model name of OLLAMA_MODEL_NAME ("lightrag" unless set), which wins over a project of that name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from app.container import Container
from app.core.errors import NotFound
from app.domain.projects import DEFAULT_PROJECT, PROJECT_ID_PATTERN
from app.services.projects import ProjectService

MODEL_PREFIX = "lightrag:"
_PROJECT_ID = re.compile(PROJECT_ID_PATTERN)


@dataclass(frozen=True)
class ChatModel:
    name: str
    project_id: str
    modified_at: datetime


def model_not_found(name: str) -> NotFound:
    return NotFound(
        f"model '{name}' not found: models are '{MODEL_PREFIX}<project>' or the default project's "
        f"plain name (GET /api/tags or /v1/models lists them)",
        code="model_not_found",
    )


def project_for_model(name: str, plain_name: str) -> str:
    """The project a model name stands for; 404 `model_not_found` for a name that is neither form."""
    if name == plain_name:
        return DEFAULT_PROJECT
    if name.startswith(MODEL_PREFIX) and _PROJECT_ID.match(project := name[len(MODEL_PREFIX) :]):
        return project
    raise model_not_found(name)


def models_of(projects: list[tuple[str, datetime]], plain_name: str) -> list[ChatModel]:
    """The models of these (project id, last change) pairs: the plain name first when the default is among them."""
    models = [
        ChatModel(plain_name, project_id, changed) for project_id, changed in projects if project_id == DEFAULT_PROJECT
    ]
    models += [
        ChatModel(MODEL_PREFIX + project_id, project_id, changed)
        for project_id, changed in projects
        if MODEL_PREFIX + project_id != plain_name
    ]
    return models


async def available_models(c: Container, allowed: set[str] | None) -> list[ChatModel]:
    """The models of the projects an API key may use (every project when `allowed` is None)."""
    projects = await ProjectService(c).list(allowed)
    return models_of([(p.id, p.updated_at) for p in projects], c.settings.ollama_model_name)

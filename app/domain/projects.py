"""Project identity rules shared by the HTTP layer, authentication and services, and the project row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.domain.rows import _Row

DEFAULT_PROJECT = "default"
PROJECT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"


@dataclass(frozen=True, slots=True)
class ProjectTotals(_Row):
    """How many documents, chunks, entities and relations a project holds."""

    documents: int
    chunks: int
    entities: int
    relations: int


@dataclass(frozen=True, slots=True)
class ProjectRow(_Row):
    id: str
    name: str
    settings: dict[str, Any]  # the project's overrides of the server settings
    created_at: datetime
    updated_at: datetime
    totals: ProjectTotals | None = None  # read only when asked for (`with_counts`)

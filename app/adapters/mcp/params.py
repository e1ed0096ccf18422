"""Argument types shared by the tools: what a model sees in each input schema."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from app.domain.projects import PROJECT_ID_PATTERN

MIN_BUDGET = 200
MAX_BUDGET = 200_000

ProjectId = Annotated[
    str, Field(pattern=PROJECT_ID_PATTERN, description="Project (knowledge base) to use; list_projects names them.")
]
EntityName = Annotated[str, Field(min_length=1, max_length=1000, description="Entity name or one of its aliases.")]
DocumentId = Annotated[str, Field(min_length=1, max_length=512, description="Document id, as ingest_text returned.")]

Budget = Annotated[
    int,
    Field(
        ge=MIN_BUDGET,
        le=MAX_BUDGET,
        description="Most tokens the result may take; a longer result is cut and says so (`truncated`).",
    ),
]
